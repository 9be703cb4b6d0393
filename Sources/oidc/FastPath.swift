import OIDC
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The hot path of scripts and kubectl, answered before swift-argument-parser runs: `oidc token`
/// with a token that is still fresh in the store, and `oidc --version`.
///
/// Parsing a command tree costs the argument parser hundreds of runtime type and conformance
/// lookups, each a scan of every conformance record in the binary: most of `oidc token`'s time,
/// once the process has started. This path reads the arguments itself and answers exactly as the
/// `token` subcommand would; for anything else (another flag, `--help`, a token that needs a
/// refresh, a usage error) it returns `nil` having done nothing visible, and the parser runs as
/// usual. Errors reading the store are the same the subcommand reports, so they are reported here.
/// `OIDC_FAST_PATH=0` turns it off (the tests compare both paths); `OIDC_FAST_PATH=require` makes
/// `oidc` exit with ``notTakenExitCode`` instead of running the parser (the tests and the benchmark
/// check that the shortcut really answered). Logging (`OIDC_LOG`, `-v`) makes it decline, so the
/// parser's path answers and logs. Core dumps are off before it runs (``CoreDumps``, from `main`).
enum FastPath {
    static let notTakenExitCode: Int32 = 98

    private static var setting: String? { getenv("OIDC_FAST_PATH").map { String(cString: $0) } }

    static var isRequired: Bool { setting == "require" }

    /// The exit code, or `nil` when the full command must run.
    static func run(_ arguments: ArraySlice<String>) -> Int32? {
        if setting == "0" { return nil }
        // Logging asked for (OIDC_LOG; a -v falls through below as an unknown argument): the parser's
        // path sets it up and logs, or explains a value that is not a level.
        if CLILog.environmentWantsLogging { return nil }
        if arguments.elementsEqual(["--version"]) {
            Console.output(Version.description)
            return ExitCodes.success
        }
        guard arguments.first == "token", let request = TokenRequest(arguments.dropFirst()) else { return nil }
        return request.answerFromStore()
    }

    /// `oidc token` with at most `--profile`, `--store`, `--output` and `--token-type`, each once,
    /// spelled `--name value` or `--name=value`.
    struct TokenRequest {
        var selection = StoreSelection()
        var output = Token.Output.token
        var tokenType: Token.TokenType?

        init?(_ arguments: ArraySlice<String>) {
            var seen: [Substring] = []  // not a Set: hashing costs this path a runtime conformance lookup
            var remaining = arguments[...]
            while let argument = remaining.popFirst() {
                let name: Substring
                let value: String
                if let equals = argument.firstIndex(of: "=") {
                    name = argument[..<equals]
                    value = String(argument[argument.index(after: equals)...])
                } else {
                    guard let next = remaining.popFirst() else { return nil }
                    name = argument[...]
                    value = next
                }
                // An empty value, or one that looks like an option, is the parser's to explain.
                guard !value.isEmpty, !value.hasPrefix("-"), !seen.contains(name) else { return nil }
                seen.append(name)
                switch name {
                case "--profile":
                    guard ProfileName.refusal(value, from: "--profile") == nil else { return nil }
                    selection.profile = value
                case "--store": selection.store = value
                case "--output":
                    guard let output = Token.Output(rawValue: value) else { return nil }
                    self.output = output
                case "--token-type":
                    guard let type = Token.TokenType(rawValue: value) else { return nil }
                    tokenType = type
                default: return nil
                }
            }
            if tokenType != nil, output != .execCredential { return nil }
            // A refused OIDC_PROFILE is the parser's to explain (StoreOptions).
            if selection.profile == nil, ProfileName.environmentRefusal() != nil { return nil }
        }

        /// Prints the token when the store holds a fresh one; `nil` when a refresh (or the parser) is needed.
        func answerFromStore() -> Int32? {
            let execVersion: String?
            do {
                execVersion = output == .execCredential ? try ExecCredential.requestedVersion() : nil
            } catch {
                return nil  // a usage error: the parser prints it with the command's help
            }
            let stored: ProfileLogin
            do { stored = try ProfileLogin.load(selection) } catch { ExitCodes.exit(with: error) }
            let tokens = stored.login.tokens
            let wantsIDToken = Token.wantsIDToken(output: output, tokenType: tokenType, tokens: tokens)
            guard !Token.needsRefresh(tokens, idToken: wantsIDToken) else { return nil }
            do {
                try Token.emit(stored.login, output: output, wantsIDToken: wantsIDToken, execVersion: execVersion, profile: selection.profileName)
            } catch {
                ExitCodes.exit(with: error)
            }
            return ExitCodes.success
        }
    }
}
