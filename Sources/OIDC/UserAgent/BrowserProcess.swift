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
            posix_spawn_file_actions_adddup2(&actions, 2, 1) == 0,
            closeInheritedDescriptors(&attributes, &actions)
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

    /// The browser gets standard input, output and error only: never the listener's socket, NIO's
    /// descriptors or a store's lock (a browser that outlives the login would keep the port bound).
    #if canImport(Darwin)
    private static func closeInheritedDescriptors(_ attributes: inout posix_spawnattr_t?, _ actions: inout posix_spawn_file_actions_t?) -> Bool {
        var flags: Int16 = 0
        guard posix_spawnattr_getflags(&attributes, &flags) == 0 else { return false }
        return posix_spawnattr_setflags(&attributes, flags | Int16(POSIX_SPAWN_CLOEXEC_DEFAULT)) == 0
    }
    #else
    private static func closeInheritedDescriptors(_ attributes: inout posix_spawnattr_t, _ actions: inout posix_spawn_file_actions_t) -> Bool {
        // glibc 2.34+ closes every descriptor from 3 up in the child, atomically with the spawn; its
        // header hides the function from Swift, so it is looked up by name.
        if let closeFrom = closeFromAction { return closeFrom(&actions, 3) == 0 }
        // Else every descriptor open now, above 2 (glibc's close action ignores one closed meanwhile).
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd") else { return false }
        for descriptor in names.compactMap({ Int32($0) }) where descriptor > 2 {
            guard posix_spawn_file_actions_addclose(&actions, descriptor) == 0 else { return false }
        }
        return true
    }

    private typealias CloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32

    private static let closeFromAction: CloseFrom? = {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np") else { return nil }
        return unsafeBitCast(symbol, to: CloseFrom.self)
    }()
    #endif

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
