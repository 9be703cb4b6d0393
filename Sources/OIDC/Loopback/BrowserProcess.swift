internal import Foundation

#if canImport(Glibc)
internal import Glibc
#elseif canImport(Musl)
internal import Musl
#elseif canImport(Darwin)
internal import Darwin
#endif

/// Starts a browser with `posix_spawn`, not Foundation's `Process`: the child gets an empty signal
/// mask and default signal dispositions. A thread of the caller's (Dispatch's workers block signals;
/// a command waiting for Ctrl-C ignores SIGINT) would otherwise hand the browser a mask or an ignored
/// SIGINT/SIGTERM/SIGHUP that it keeps for its whole life. Standard input is `/dev/null`; standard
/// output goes to standard error, which stays the caller's (stdout carries a command's result).
enum BrowserProcess {
    enum Outcome: Equatable {
        case running
        case exited(Int32)
        case signalled(Int32)
    }

    /// Spawns `executable` and watches it for `window`: `.running` when it is still running then (it is
    /// reaped in the background when it ends), else how it ended. `nil` when it could not be started.
    static func launch(_ executable: String, arguments: [String], environment: [String: String], window: Duration) async -> Outcome? {
        guard let pid = spawn(executable, arguments: arguments, environment: environment) else { return nil }
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

    private static func spawn(_ executable: String, arguments: [String], environment: [String: String]) -> pid_t? {
        #if canImport(Darwin)
        var attributes: posix_spawnattr_t?
        var actions: posix_spawn_file_actions_t?
        #else
        var attributes = posix_spawnattr_t()
        var actions = posix_spawn_file_actions_t()
        #endif
        guard posix_spawnattr_init(&attributes) == 0 else { return nil }
        defer { posix_spawnattr_destroy(&attributes) }
        guard posix_spawn_file_actions_init(&actions) == 0 else { return nil }
        defer { posix_spawn_file_actions_destroy(&actions) }

        var empty = sigset_t()
        var all = sigset_t()
        sigemptyset(&empty)
        sigfillset(&all)
        guard posix_spawnattr_setsigmask(&attributes, &empty) == 0, posix_spawnattr_setsigdefault(&attributes, &all) == 0,
            posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF)) == 0,
            posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0) == 0,
            posix_spawn_file_actions_adddup2(&actions, 2, 1) == 0
        else { return nil }

        let argv = ([executable] + arguments).map { strdup($0) }
        let envp = environment.map { strdup("\($0.key)=\($0.value)") }
        defer { (argv + envp).forEach { free($0) } }
        var pid = pid_t()
        let status = (argv + [nil]).withUnsafeBufferPointer { argvBuffer in
            (envp + [nil]).withUnsafeBufferPointer { envpBuffer -> Int32 in
                guard let argvBase = argvBuffer.baseAddress, let envpBase = envpBuffer.baseAddress else { return EINVAL }
                return posix_spawn(&pid, executable, &actions, &attributes, argvBase, envpBase)
            }
        }
        return status == 0 ? pid : nil
    }

    /// `waitpid`: how the child ended, or `nil` while it runs (non-blocking).
    private static func reap(_ pid: pid_t, blocking: Bool) -> Outcome? {
        var status: Int32 = 0
        while true {
            let result = waitpid(pid, &status, blocking ? 0 : WNOHANG)
            if result == pid { break }
            if result == 0 { return nil }
            if errno == EINTR { continue }
            return .exited(-1)  // not our child any more: treat as ended
        }
        let signal = status & 0x7F
        return signal == 0 ? .exited((status >> 8) & 0xFF) : .signalled(signal)
    }
}
