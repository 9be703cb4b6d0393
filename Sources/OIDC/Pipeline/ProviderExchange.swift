internal import Foundation
internal import Synchronization

/// What the stages of one provider call learn that its answer's check needs: the secrets the
/// request carried (the form's, and the client authentication's, which a stage adds afresh on each
/// attempt) and when the last attempt left. It rides in the call's ``ProviderRequest``, so that the
/// stages stay values made once.
package final class ProviderExchange: Sendable {
    private struct State {
        var secrets: [String]
        var attemptStart: ContinuousClock.Instant?
    }

    private let state: Mutex<State>

    /// An exchange whose request carries `secrets` (a code, a refresh token, the client secret).
    init(secrets: [String]) { state = Mutex(State(secrets: secrets)) }

    /// Every secret value sent so far, for redaction.
    var secrets: [String] { state.withLock { $0.secrets } }

    /// When the last attempt left, when its time was taken.
    var attemptStart: ContinuousClock.Instant? { state.withLock { $0.attemptStart } }

    /// Adds values a stage sent (a client secret, a client assertion).
    func sent(_ values: [String]) { state.withLock { $0.secrets += values } }

    /// Notes that an attempt leaves now.
    func attemptStarted(at instant: ContinuousClock.Instant) { state.withLock { $0.attemptStart = instant } }
}
