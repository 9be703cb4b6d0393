import ArgumentParser
import OIDC
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The documented, stable exit codes of `oidc`.
enum ExitCodes {
    static let success: Int32 = 0
    static let unexpected: Int32 = 1
    static let usage: Int32 = 2
    static let cancelled: Int32 = 3
    static let authenticationFailed: Int32 = 4
    static let temporarilyUnavailable: Int32 = 5
    static let transportSecurity: Int32 = 6
    static let storage: Int32 = 7
    static let interrupted: Int32 = 130

    static func code(for category: OIDCError.Category) -> Int32 {
        switch category {
        case .configuration: usage
        case .provider, .security: authenticationFailed
        case .transient: temporarilyUnavailable
        case .transport: transportSecurity
        case .storage: storage
        case .cancelled: cancelled
        case .internal: unexpected
        }
    }

    /// Prints what the error says where it belongs and exits with its code.
    static func exit(with error: any Error) -> Never {
        if let error = error as? OIDCError {
            let assertionRefusal = ClientAuthOptions.assertionRefusal(error)
            Console.error("oidc: error: \(assertionRefusal ?? error.description)")
            // The provider's sentence does not say that the login is gone (F6): the command does.
            if let ended = LoginAgain.endedNote(for: error) { Console.error("oidc: \(ended)") }
            if assertionRefusal == nil, error.providerError?.error == "invalid_client" {
                // A server that forgot the client (restarted, expired it) says so only here, on a refresh or
                // a grant; a login registers a client oidc registered (--resource) anew.
                Console.error(
                    "oidc: the provider does not accept the client (invalid_client): if oidc registered it (oidc login --resource), log in again with oidc login --profile NAME, which registers anew; otherwise check --client-id and the client's credentials")
            }
            systemExit(code(for: error.category))
        }
        let argumentCode = OIDCCommand.exitCode(for: error)
        let message = OIDCCommand.fullMessage(for: error)
        if argumentCode == .success {
            if !message.isEmpty { Console.output(message) }
            systemExit(success)
        }
        if !message.isEmpty { Console.error(message) }
        systemExit(argumentCode == .validationFailure ? usage : argumentCode.rawValue)
    }
}

private func systemExit(_ code: Int32) -> Never {
    #if canImport(Glibc)
    Glibc.exit(code)
    #else
    Darwin.exit(code)
    #endif
}
