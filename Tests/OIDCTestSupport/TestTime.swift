import Foundation
public import Testing

/// The one scale of the tests' time bounds: `OIDC_TEST_TIME_SCALE`, a positive number, 4 when it is
/// not set (or not a positive number).
///
/// The tests wait on events, or on clocks they move themselves. What is left in wall-clock time
/// are bounds that stop a hung wait (a deadline for an event that should come, a socket timeout,
/// a watchdog, a time limit), a timeout handed to the library for an answer that should come
/// (`operationTimeout` of a PostgreSQL store, an HTTP request's timeout), and the "it did not wait
/// for X" checks, where X and the bound are both scaled. All of them go through ``scaled(_:)``
/// (whole seconds and poll counts too, and `.timeLimit(.scaledMinutes(_:))`), so that a loaded machine (the
/// suite starts every test at once on two cores) needs one variable, not an edit per test. The
/// figure written in a test is what an idle machine needs; 4 covers two busy cores beside the
/// suite. A lower bound ("waited at least the interval") is never scaled: a loaded machine only
/// makes waits longer.
public enum TestTime {
    /// The factor: `OIDC_TEST_TIME_SCALE`, else 4.
    public static let scale: Double = {
        guard let text = ProcessInfo.processInfo.environment["OIDC_TEST_TIME_SCALE"], let value = Double(text),
            value.isFinite, value > 0
        else { return 4 }
        return value
    }()

    /// `bound` times ``scale``.
    public static func scaled(_ bound: Duration) -> Duration { bound * scale }

    /// `count` times ``scale``, rounded up: whole seconds (a socket timeout, a `sleep` command), or
    /// the polls of a loop that waits for an event.
    public static func scaled(_ count: Int) -> Int { Int((Double(count) * scale).rounded(.up)) }
}

extension Duration {
    /// `bound` times the tests' time scale (``TestTime/scale``): `timeout: .scaled(.seconds(5))`.
    public static func scaled(_ bound: Duration) -> Duration { TestTime.scaled(bound) }
}

extension TimeLimitTrait.Duration {
    /// `minutes` times the tests' time scale (``TestTime/scale``), rounded up: `.timeLimit(.scaledMinutes(1))`.
    public static func scaledMinutes(_ minutes: Int) -> Self { .minutes(Int64((Double(minutes) * TestTime.scale).rounded(.up))) }
}
