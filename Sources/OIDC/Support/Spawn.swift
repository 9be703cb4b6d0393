internal import Foundation

#if canImport(Glibc)
internal import Glibc
#elseif canImport(Musl)
internal import Musl
#elseif canImport(Darwin)
internal import Darwin
#endif

/// `posix_spawn`, not Foundation's `Process`, for every child this package starts (a browser, and
/// the tests' helper processes through OIDCTesting):
/// - the child gets an empty signal mask and default signal dispositions, whatever the calling
///   thread has (Dispatch's workers block signals; a command waiting for Ctrl-C ignores SIGINT);
/// - it gets standard input, output and error only: never a listener's socket, NIO's descriptors or
///   a store's lock;
/// - on Linux, `Process.run()` copies 256 bytes of each `/proc/self/fd` entry's name, reading past
///   glibc's buffer, and crashes a process with more than about 1,300 descriptors open now and then
///   (swift-corelibs-foundation PR 5472).
package enum Spawn {
    /// A child that could not be started: what failed, with the system's reason.
    package struct Failure: Error, CustomStringConvertible {
        package let description: String
        /// The system's reason alone (`strerror`), without the path.
        package var reason: String = ""
    }

    /// Starts `path` with `arguments` and exactly `environment`; the given descriptors become the
    /// child's 0, 1 and 2 (`nil` standard input: `/dev/null`).
    package static func start(
        _ path: String, arguments: [String], environment: [String: String], stdin: Int32?, stdout: Int32, stderr: Int32
    ) throws(Failure) -> Int32 {
        #if canImport(Darwin)
        var attributes: posix_spawnattr_t?
        var actions: posix_spawn_file_actions_t?
        #else
        var attributes = posix_spawnattr_t()
        var actions = posix_spawn_file_actions_t()
        #endif
        guard posix_spawnattr_init(&attributes) == 0 else { throw Failure(description: "posix_spawnattr_init failed") }
        defer { posix_spawnattr_destroy(&attributes) }
        guard posix_spawn_file_actions_init(&actions) == 0 else { throw Failure(description: "posix_spawn_file_actions_init failed") }
        defer { posix_spawn_file_actions_destroy(&actions) }

        var empty = sigset_t()
        var all = sigset_t()
        sigemptyset(&empty)
        sigfillset(&all)
        let input = stdin.map { posix_spawn_file_actions_adddup2(&actions, $0, 0) }
            ?? posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        guard posix_spawnattr_setsigmask(&attributes, &empty) == 0, posix_spawnattr_setsigdefault(&attributes, &all) == 0,
            posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF)) == 0,
            input == 0,
            posix_spawn_file_actions_adddup2(&actions, stdout, 1) == 0,
            posix_spawn_file_actions_adddup2(&actions, stderr, 2) == 0,
            closeInheritedDescriptors(&attributes, &actions)
        else { throw Failure(description: "setting up the spawn of \(path) failed") }

        let argv = ([path] + arguments).map { strdup($0) }
        let envp = environment.map { strdup("\($0.key)=\($0.value)") }
        defer { (argv + envp).forEach { free($0) } }
        var pid = pid_t()
        var status = EINVAL
        // ETXTBSY: a program written a moment ago (a script, a test's fake browser) is still open for
        // writing in the child of a spawn that another thread started meanwhile, until that child
        // closes its copies. Short and bounded: tried again for at most about 0.4 s.
        for attempt in 0..<busyRetries {
            if attempt > 0 { usleep(UInt32(attempt) * 2_000) }
            status = (argv + [nil]).withUnsafeBufferPointer { argvBuffer in
                (envp + [nil]).withUnsafeBufferPointer { envpBuffer -> Int32 in
                    guard let argvBase = argvBuffer.baseAddress, let envpBase = envpBuffer.baseAddress else { return EINVAL }
                    return posix_spawn(&pid, path, &actions, &attributes, argvBase, envpBase)
                }
            }
            if status != ETXTBSY { break }
        }
        guard status == 0 else {
            let reason = String(cString: strerror(status))
            throw Failure(description: "cannot start \(path): \(reason)", reason: reason)
        }
        return pid
    }

    /// How many times a spawn refused with ETXTBSY is tried (waits of 2, 4, … 38 ms between).
    static let busyRetries = 20

    /// Every descriptor from 3 up is closed in the child (after the dup2s above).
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
}
