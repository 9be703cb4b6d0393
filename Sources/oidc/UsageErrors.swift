import ArgumentParser
import OIDC

/// Usage errors in one voice: `oidc: error: …` as every other error, then the usage of the
/// subcommand the user typed (not the root's) and where its help is.
enum UsageErrors {
    /// `message` of the parser (which starts `Error: `), with oidc's prefix.
    static func prefixed(_ message: String) -> String {
        message.hasPrefix("Error: ") ? "oidc: error: " + message.dropFirst("Error: ".count) : message
    }

    /// The text for a `ValidationError` thrown while `command` ran (after parsing): the message,
    /// then `command`'s usage and help, which the parser would give only for the root command.
    static func message(for error: ValidationError, command: any ParsableCommand.Type) -> String {
        let name = command == OIDCCommand.self ? "oidc" : "oidc \(command._commandName)"
        let usage = OIDCCommand.usageString(for: command)
        return "oidc: error: \(error.message)\nUsage: \(usage)\n  See '\(name) --help' for more help."
    }
}
