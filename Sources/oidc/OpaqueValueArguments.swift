/// Values that are opaque and may start with a dash: a server's DPoP nonce, a state, a PKCE
/// verifier, a client secret, a token, a kid, a registered client id (random base64url starts
/// with `-` one time in 64), and a profile name (`--profile -dash` is a name like any other).
/// `--nonce -Qv9h` is rewritten to `--nonce=-Qv9h` before the argument parser sees it, which
/// would otherwise read `-Qv9h` as a group of short flags (`-v`, and `-h`: help on stdout), or
/// report the option's value as missing. As getopt does, the word after such an option is its
/// value, unless it is a long option (`--no-nonce`) or `-` (standard input), which stay as they are.
enum OpaqueValueArguments {
    /// The subcommands that take `--profile` (``StoreOptions``).
    static let profileCommands = ["login", "token", "refresh", "status", "request", "proof", "logout", "introspect", "exchange", "inject"]

    /// The options of each subcommand whose value is opaque.
    static let options: [String: Set<String>] = [
        "proof": ["--nonce"],
        "verify": ["--nonce", "--access-token"],
        "authorize-url": ["--state", "--nonce", "--code-verifier", "--client-id"],
        "login": ["--client-secret", "--key-id", "--client-id"],
        "provider": ["--client-secret", "--client-id"],
        "inject": ["--access-token", "--refresh-token", "--id-token", "--expires-in", "--client-id"],
        "resource-server": ["--client-id"],
    ].merging(profileCommands.map { ($0, ["--profile"]) }) { $0.union($1) }

    /// `arguments` (without the program name) with each such option joined to a value that starts with a dash.
    static func joined(_ arguments: [String]) -> [String] {
        guard let commandIndex = arguments.firstIndex(where: { !$0.hasPrefix("-") }),
            let opaque = options[arguments[commandIndex]]
        else { return arguments }
        var result = Array(arguments[...commandIndex])
        var index = commandIndex + 1
        while index < arguments.count {
            let argument = arguments[index]
            if argument == "--" {
                result += arguments[index...]
                break
            }
            if opaque.contains(argument), index + 1 < arguments.count, takesAsValue(arguments[index + 1]) {
                result.append(argument + "=" + arguments[index + 1])
                index += 2
                continue
            }
            result.append(argument)
            index += 1
        }
        return result
    }

    /// A word that starts with a dash and is neither `-` nor shaped like a long option (`--name`,
    /// `--name=value`: lowercase letters, digits and dashes).
    static func takesAsValue(_ word: String) -> Bool {
        guard word.hasPrefix("-"), word != "-", word != "--" else { return false }
        guard word.hasPrefix("--") else { return true }
        let name = word.dropFirst(2).prefix { $0 != "=" }
        return name.isEmpty || !name.allSatisfy { ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "-" }
    }
}
