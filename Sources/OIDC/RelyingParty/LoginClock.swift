package import Foundation

/// The time a login flow reads and waits on (``LoopbackLogin``, ``DeviceLogin``): the date, as the
/// relying party's ``TokenClient/now`` gives it, and a sleep. The system's by default; a test
/// passes one it moves itself, so that nothing waits on the wall clock.
///
/// ```swift
/// var login = rp.loopbackLogin()
/// login.clock = LoginClock(now: { testNow() }, sleep: { try await testClock.sleep(for: $0) })
/// ```
package struct LoginClock: Sendable {
    /// The current date.
    package var now: @Sendable () -> Date
    /// Waits `duration`; throws when the task is cancelled.
    package var sleep: @Sendable (Duration) async throws -> Void

    /// A clock of `now` that sleeps with `sleep`: the system's date and `Task.sleep` by default.
    package init(
        now: @escaping @Sendable () -> Date = { Date() },
        sleep: @escaping @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) }
    ) {
        self.now = now
        self.sleep = sleep
    }

    /// The system's date and `Task.sleep`.
    package static let system = LoginClock()
}
