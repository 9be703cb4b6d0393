import ArgumentParser
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import OIDC

/// `oidc`: log in to OpenID Connect providers from a terminal and hand tokens to scripts.
struct OIDCCommand: AsyncParsableCommand, LoggingCommand {
    static let configuration = CommandConfiguration(
        commandName: "oidc",
        abstract: "OpenID Connect from the terminal: authorization URLs, logins, tokens for scripts.",
        discussion: """
            stdout carries only the requested result; messages go to stderr.
            Exit codes: 0 success, 1 unexpected, 2 usage, 3 cancelled or timed out, \
            4 authentication failed, 5 temporarily unavailable, 6 TLS, pinning or host allowlist, \
            7 local storage, 130 interrupted.
            """,
        version: Version.description,
        subcommands: [
            Login.self, Token.self, Refresh.self, Status.self, Request.self, Proof.self, Logout.self, Demo.self,
            Introspect.self, Exchange.self, AuthorizeURL.self, Discover.self, Verify.self, Decode.self, Inject.self, Provider.self, Mint.self,
            ResourceServerCommand.self,
        ]
    )

    @OptionGroup var logging: LoggingOptions
}

@main
enum Main {
    static func main() async {
        CoreDumps.disable()  // before anything holds a token, the fast path included
        if let code = FastPath.run(CommandLine.arguments.dropFirst()) { exit(code) }
        if FastPath.isRequired {
            // OIDC_FAST_PATH=require: for tests and benchmarks that must know the shortcut answered.
            Console.error("oidc: the fast path did not answer (OIDC_FAST_PATH=require)")
            exit(FastPath.notTakenExitCode)
        }
        let arguments = OpaqueValueArguments.joined(Array(CommandLine.arguments.dropFirst()))
        let commands = OIDCCommand.configuration.subcommands.map { $0._commandName } + ["help"]
        if let problem = SubcommandSuggestion.problem(in: arguments, commands: commands) {
            Console.error(problem)
            exit(ExitCodes.usage)
        }
        var command: any ParsableCommand
        do {
            command = try OIDCCommand.parseAsRoot(arguments)
        } catch {
            if OIDCCommand.exitCode(for: error) != .success {
                Console.error(UsageErrors.prefixed(OIDCCommand.fullMessage(for: error)))
                exit(OIDCCommand.exitCode(for: error) == .validationFailure ? ExitCodes.usage : OIDCCommand.exitCode(for: error).rawValue)
            }
            ExitCodes.exit(with: error)
        }
        let kind = type(of: command)
        do {
            if let problem = CLILog.environmentProblem { Console.error(problem) }
            CLILog.bootstrap(level: CLILog.level(of: command))
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch let error as ValidationError {
            Console.error(UsageErrors.message(for: error, command: kind))
            exit(ExitCodes.usage)
        } catch let error as OIDCError {
            let loginTimeout = (command as? Login)?.timeout
            guard let advice = NetworkTimeout.advice(for: error, command: kind._commandName, loginTimeout: loginTimeout) else { ExitCodes.exit(with: error) }
            Console.error("oidc: error: \(error.description)")
            Console.error(advice)
            exit(ExitCodes.code(for: error.category))
        } catch {
            ExitCodes.exit(with: error)
        }
    }
}
