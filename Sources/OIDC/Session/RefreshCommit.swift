import Foundation

/// What must not be cut short in a refresh: from the moment the refresh is sent (the provider may
/// spend the old refresh token and rotate it before its answer arrives) to the durable save of the
/// new tokens. A process killed there leaves the spent refresh token in the store, and the next
/// refresh gets the whole login revoked by providers that detect reuse.
///
/// The session opens a bounded commit when it sends the refresh (``sendingBound``: a termination
/// that arrives while the answer is on its way waits for it at most that long, since an answer may
/// never come), a full one when the answer has come, and leaves it once the new tokens are saved
/// (before a refreshed ID token is verified, which may have to fetch the provider's keys). A process
/// can install a shield that holds termination signals back for that span: the `oidc` command does.
/// A kill while an answer that takes longer than the bound is still on its way loses the rotated
/// token, as a lost answer does.
package enum RefreshCommit {
    /// Holds termination back while at least one commit is open.
    package protocol Shield: Sendable {
        /// A commit opens: termination is held back until it closes, or, with a `bound`, for at most
        /// that long after the termination arrived.
        func enter(holdingAtMost bound: Duration?)
        /// A commit opened with `bound` closed; a termination held back meanwhile may happen now.
        func leave(holdingAtMost bound: Duration?)
    }

    /// How long a termination that arrives while a refresh's answer is on its way is held back: 5 s.
    package static let sendingBound = Duration.seconds(5)

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

    /// An open commit: termination is held back until ``close()`` (with a bound, at most that long).
    struct Open {
        fileprivate let shield: (any Shield)?
        fileprivate let bound: Duration?
        /// Closes the commit; call it once.
        func close() { shield?.leave(holdingAtMost: bound) }
    }

    /// Opens a commit: the installed shield, if any, holds termination back until it is closed;
    /// with a `bound`, at most that long after the termination arrived.
    static func open(holdingAtMost bound: Duration? = nil) -> Open {
        let shield = installed.shield
        shield?.enter(holdingAtMost: bound)
        return Open(shield: shield, bound: bound)
    }
}
