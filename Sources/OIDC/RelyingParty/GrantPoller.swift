package import Foundation

/// The wait of a grant whose user approves elsewhere, polled at the token endpoint: the device flow
/// (RFC 8628 §3.5) now, CIBA's poll mode (CIBA Core §7.3) next, which share its rules:
///
/// - a poll every `interval`, plus a margin (a tenth of it, at least one second), so that a clock
///   that runs fast (seen under WSL) does not earn `slow_down` after `slow_down`;
/// - `slow_down` adds 5 s to this and every later poll, or takes the provider's new interval when
///   it sends a longer one; `Retry-After` is honoured;
/// - a transient failure (network, 5xx) is tried again, three in a row at most unless the server
///   says when to come back (`Retry-After`, waited for up to 5 minutes);
/// - the wait ends at the grant's expiry by this machine's own clock (some providers never say
///   `expired_token`), or at the caller's timeout when that comes first; cancellation ends it too.
///
/// Every wait is on the injected ``LoginClock``, so a test moves time itself.
package struct GrantPoller: Sendable {
    /// How a wait that found no tokens ended, for the grant's own message.
    package struct Expiry: Sendable {
        /// How many `slow_down` answers came: from ``driftSuspicion`` on, a fast clock is the likely cause.
        package var slowDowns: Int
        /// Whether the caller's timeout ended the wait, rather than the grant's expiry.
        package var timedOut: Bool
        /// The provider's `expired_token`, when it said so.
        package var providerError: OIDCError.ProviderError?
    }

    /// What happens while the wait goes on, for a progress display.
    package typealias Progress = DeviceLogin.Progress

    /// The provider's polling interval.
    package var interval: Duration
    /// When the grant expires, by this machine's clock.
    package var expiresAt: Date
    /// How long to wait at most; until ``expiresAt`` when `nil`.
    package var timeout: Duration?
    /// The time the wait reads and sleeps on.
    package var clock: LoginClock
    /// Told what happens while the wait goes on.
    package var onProgress: @Sendable (Progress) -> Void

    /// Transient poll failures in a row after which the wait gives up.
    package static let transientFailureLimit = 3
    /// `slow_down` answers from which an expiry names a fast clock as the likely cause.
    package static let driftSuspicion = 3

    package init(
        interval: Duration, expiresAt: Date, timeout: Duration?, clock: LoginClock, onProgress: @escaping @Sendable (Progress) -> Void
    ) {
        self.interval = interval
        self.expiresAt = expiresAt
        self.timeout = timeout
        self.clock = clock
        self.onProgress = onProgress
    }

    /// Calls `poll` at the interval until it returns tokens, and returns them.
    ///
    /// - Throws: `expired(…)` when the wait ends without tokens (the grant's expiry, the timeout,
    ///   or the provider's `expired_token`); ``OIDCError/Code/cancelled`` when the task is
    ///   cancelled; a refusal `poll` throws; a transient error after ``transientFailureLimit``
    ///   failures in a row without a `Retry-After`.
    package func tokens(
        polling poll: () async throws(OIDCError) -> DevicePoll, expired: (Expiry) -> OIDCError
    ) async throws(OIDCError) -> TokenSet {
        let limit = timeout.map { clock.now().addingTimeInterval($0.timeInterval) }
        let deadline = min(expiresAt, limit ?? .distantFuture)
        var interval = interval
        var wait = Self.withMargin(interval)
        var expiry = Expiry(slowDowns: 0, timedOut: limit == deadline)
        var failures = 0
        // Bounded by the deadline: every pass sleeps towards it first.
        while true {
            let left = deadline.timeIntervalSince(clock.now())
            guard left > 0 else { throw expired(expiry) }
            // A wait that ends past the deadline ends there, with no poll: none comes sooner than the interval.
            let endsInTime = wait.timeInterval < left
            do { try await clock.sleep(endsInTime ? wait : .milliseconds(Int64(min(left, 1e9) * 1000))) } catch {
                throw OIDCError(.cancelled, "The login was cancelled while it waited for the user's approval.")
            }
            guard endsInTime, deadline > clock.now() else { throw expired(expiry) }
            let answer: DevicePoll
            do {
                answer = try await poll()
            } catch where error.category == .transient && (failures + 1 < Self.transientFailureLimit || Self.retryAfter(of: error) != nil) {
                // A server that says when to come back (503 or 429 with Retry-After) is waited for,
                // until the deadline; one that does not gets three tries in a row.
                let retryAfter = Self.retryAfter(of: error)
                if retryAfter == nil { failures += 1 }
                wait = Self.withMargin(max(interval, retryAfter ?? .zero))
                onProgress(.retrying(error, after: wait))
                continue
            } catch where error.providerError?.error == "expired_token" {
                expiry.timedOut = false
                expiry.providerError = error.providerError
                throw expired(expiry)
            }
            failures = 0
            var retryAfter: Duration?
            switch answer {
            case .tokens(let tokens):
                return tokens
            case .pending(let after):
                retryAfter = after
                onProgress(.pending)
            case .slowDown(let given, let after):
                retryAfter = after
                expiry.slowDowns += 1
                // RFC 8628 §3.5: this and every later request waits 5 s more; a longer interval named is taken.
                interval = max(given ?? .zero, interval + .seconds(5))
                onProgress(.slowDown(interval: interval))
            }
            wait = Self.withMargin(max(interval, retryAfter ?? .zero))
        }
    }

    /// `interval` and a margin: a tenth of it, at least one second.
    package static func withMargin(_ interval: Duration) -> Duration {
        interval + max(.seconds(1), interval / 10)
    }

    /// The `Retry-After` of a transient error (seconds or an HTTP date), at most 5 minutes.
    private static func retryAfter(of error: OIDCError) -> Duration? {
        error.retryAfter.map { min($0, .seconds(300)) }
    }
}
