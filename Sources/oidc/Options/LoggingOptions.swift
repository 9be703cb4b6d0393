import ArgumentParser
import Logging
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `-v`/`--verbose` (repeatable) and `OIDC_LOG`: how much of what the library does is logged to
/// stderr. Every subcommand and the root take it, so `oidc -vv login` and `oidc login -vv` mean the
/// same (argument-parser gives the subcommand's group the values given before its name).
struct LoggingOptions: ParsableArguments {
    @Flag(
        name: [.short, .long],
        help: "Log what oidc does to stderr, one line per event: -v debug, -vv trace (or OIDC_LOG=debug|trace). Never a token or a secret."
    )
    var verbose: Int

    /// The more verbose of the flags and `OIDC_LOG`; `nil` logs nothing.
    var level: Logger.Level? {
        let flags: Logger.Level? = verbose >= 2 ? .trace : verbose == 1 ? .debug : nil
        let environment = CLILog.environmentLevel()
        switch (flags, environment) {
        case (let flags?, let environment?): return min(flags, environment)
        default: return flags ?? environment
        }
    }
}

/// A command whose run can be logged: every `oidc` command.
protocol LoggingCommand {
    var logging: LoggingOptions { get }
}

/// The command's logging: swift-log bootstrapped once, before the command runs, to one line per
/// event on stderr, or to nothing. stdout is never written to (scripts read it).
enum CLILog {
    /// The components' labels, as the library documents them.
    enum Component: String {
        case transport, discovery, token, jwks, session, store, loopback
    }

    /// What `command`'s `-v` flags and `OIDC_LOG` ask for.
    static func level(of command: any ParsableCommand) -> Logger.Level? {
        guard let logged = command as? any LoggingCommand else { return environmentLevel() }
        return logged.logging.level
    }

    /// A logger for `component`, through the handler ``bootstrap(level:)`` installed.
    static func logger(_ component: Component) -> Logger {
        Logger(label: "oidc." + component.rawValue)
    }

    /// Installs the stderr handler at `level`, or a handler that discards everything. Call once,
    /// after parsing and before any ``logger(_:)``.
    static func bootstrap(level: Logger.Level?) {
        if let level {
            LoggingSystem.bootstrap { label in StderrLogHandler(label: label, logLevel: level) }
        } else {
            LoggingSystem.bootstrap { _ in SwiftLogNoOpLogHandler() }
        }
    }

    /// `OIDC_LOG` as a level: `debug` or `trace`; unset, empty or `off` is `nil`. Anything else is
    /// `nil` too, and ``environmentProblem`` says why.
    static func environmentLevel() -> Logger.Level? {
        switch environmentValue?.lowercased() {
        case "debug": .debug
        case "trace": .trace
        default: nil
        }
    }

    /// The warning for an `OIDC_LOG` that is not a level, or `nil`.
    static var environmentProblem: String? {
        guard let value = environmentValue, !["debug", "trace", "off"].contains(value.lowercased()) else { return nil }
        let shown = value.unicodeScalars.allSatisfy { $0.value >= 0x20 && $0.value < 0x7F } && value.count <= 40 ? value : "…"
        return "oidc: warning: OIDC_LOG='\(shown)' is not a log level; use debug, trace or off. Not logging."
    }

    /// Whether `OIDC_LOG` asks for anything but silence: the fast path of `oidc token` then
    /// declines, so the parser's path logs (or warns).
    static var environmentWantsLogging: Bool {
        guard let value = environmentValue else { return false }
        return value.lowercased() != "off"
    }

    private static var environmentValue: String? {
        guard let raw = getenv("OIDC_LOG"), raw.pointee != 0 else { return nil }
        return String(cString: raw)
    }
}
