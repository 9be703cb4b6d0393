internal import Foundation

#if canImport(Glibc)
internal import Glibc
#elseif canImport(Musl)
internal import Musl
#elseif canImport(Darwin)
internal import Darwin
#endif

/// Starts a browser through ``Spawn``: an empty signal mask and default signal dispositions (a mask
/// or an ignored SIGINT/SIGTERM/SIGHUP of the caller's thread would stay with the browser for its
/// whole life), no descriptor of ours but standard error. Standard input is `/dev/null`; standard
/// output goes to standard error, which stays the caller's (stdout carries a command's result).
enum BrowserProcess {
    enum Outcome: Equatable {
        case running
        case exited(Int32)
        case signalled(Int32)
        case notStarted(String)
    }

    /// Spawns `executable` and watches it for `window`: `.running` when it is still running then (it is
    /// reaped in the background when it ends), else how it ended. `.notStarted` with the system's
    /// reason when it could not be started.
    static func launch(_ executable: String, arguments: [String], environment: [String: String], window: Duration) async -> Outcome {
        let pid: pid_t
        do { pid = try Spawn.start(executable, arguments: arguments, environment: environment, stdin: nil, stdout: 2, stderr: 2) }
        catch { return .notStarted(error.reason.isEmpty ? error.description : error.reason) }
        let step = Duration.milliseconds(50)
        var waited = Duration.zero
        while waited < window {
            if let ended = reap(pid, blocking: false) { return ended }
            do { try await Task.sleep(for: step) } catch { break }
            waited += step
        }
        if let ended = reap(pid, blocking: false) { return ended }
        // Still running: reap it when it ends, so no zombie is left in a long-running program.
        Thread.detachNewThread { _ = reap(pid, blocking: true) }
        return .running
    }

    /// `waitpid`: how the child ended, or `nil` while it runs (non-blocking).
    private static func reap(_ pid: pid_t, blocking: Bool) -> Outcome? {
        var status: Int32 = 0
        while true {
            let result = waitpid(pid, &status, blocking ? 0 : WNOHANG)
            if result == pid { break }
            if result == 0 { return nil }
            if errno == EINTR { continue }
            // ECHILD: SIGCHLD is ignored here (or the host reaps children itself), so the child was
            // reaped by the system and its end cannot be known: it started, which is what counts.
            return .running
        }
        let signal = status & 0x7F
        return signal == 0 ? .exited((status >> 8) & 0xFF) : .signalled(signal)
    }
}
