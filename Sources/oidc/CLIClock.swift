import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The CLI's notion of now: what every command compares expiry times with and dates its
/// requests by (the token client's clock, hence the session's and the verifiers').
///
/// `OIDC_TEST_CLOCK_OFFSET` (seconds, `-86400` to `86400`) moves it, **for tests only**: a test
/// can then see a token expire without waiting for it. Any other value is ignored. It is read once.
enum CLIClock {
    /// The offset from the system clock, in seconds.
    static let offset: TimeInterval = {
        guard let value = getenv("OIDC_TEST_CLOCK_OFFSET"), let seconds = Double(String(cString: value)),
            seconds.isFinite, abs(seconds) <= 86_400
        else { return 0 }
        return seconds
    }()

    /// The current time as the CLI sees it.
    @Sendable static func now() -> Date { Date(timeIntervalSinceNow: offset) }
}
