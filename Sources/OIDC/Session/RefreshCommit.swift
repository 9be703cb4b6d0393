import Foundation

/// What must not be cut short in a refresh: from the provider's answer (the old refresh token is
/// spent, its replacement exists only in memory) to the durable save of the new tokens. A process
/// killed there leaves the spent refresh token in the store, and the next refresh gets the whole
/// login revoked by providers that detect reuse.
///
/// The session enters the commit when the answer has come and leaves it once the new tokens are
/// saved (before a refreshed ID token is verified, which may have to fetch the provider's keys).
/// A process can install a shield that holds termination signals back for that span: the `oidc`
/// command does.
package enum RefreshCommit {
    /// Holds termination back while at least one commit is open.
    package protocol Shield: Sendable {
        /// A commit opens.
        func enter()
        /// A commit closed; a termination held back meanwhile may happen now.
        func leave()
    }

    private final class Installed: @unchecked Sendable {
        private let lock = NSLock()
        private var value: (any Shield)?
        var shield: (any Shield)? {
            get { lock.withLock { value } }
            set { lock.withLock { value = newValue } }
        }
    }

    private static let installed = Installed()

    /// Installs the process's shield (the last one installed is used).
    package static func install(_ shield: any Shield) { installed.shield = shield }

    /// An open commit: termination is held back until ``close()``.
    struct Open {
        fileprivate let shield: (any Shield)?
        /// Closes the commit; call it once.
        func close() { shield?.leave() }
    }

    /// Opens a commit: the installed shield, if any, holds termination back until it is closed.
    static func open() -> Open {
        let shield = installed.shield
        shield?.enter()
        return Open(shield: shield)
    }
}
