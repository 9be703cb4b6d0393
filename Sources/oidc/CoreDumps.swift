#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// No core dump of `oidc` (review 3, I2): the process holds access, refresh and ID tokens, a
/// client secret and a PKCE verifier in memory, as Swift strings that are never wiped, and a core
/// file (or a crash collector such as systemd-coredump) would keep them on disk.
///
/// Done first thing in every run, the fast path of `oidc token` included, at the cost of three
/// system calls (`getrlimit`, `setrlimit`, `prctl`):
/// - the soft `RLIMIT_CORE` is set to 0: no core file. The hard limit stays, so a browser `oidc
///   login` starts may raise its own limit again;
/// - on Linux, `prctl(PR_SET_DUMPABLE, 0)`: no core dump at all, piped to a collector or not
///   (with `fs.suid_dumpable` 2, one readable by root only), and other processes of the same user
///   may no longer attach with `ptrace` or read `/proc/PID/mem` or `environ`. The browser gets the
///   default again when it starts a program (`execve`).
///
/// Neither can fail in a way that matters: a refusal leaves the process as it was, and `oidc` runs on.
enum CoreDumps {
    static func disable() {
        var limit = rlimit()
        if getrlimit(resource(RLIMIT_CORE), &limit) == 0, limit.rlim_cur != 0 {
            limit.rlim_cur = 0
            _ = setrlimit(resource(RLIMIT_CORE), &limit)
        }
        #if os(Linux)
        notDumpable()
        #endif
    }

    #if os(Linux)
    /// `prctl` is variadic in C, which Swift does not import: it is called through a prototype with
    /// its five arguments, passed as the Linux calling conventions pass them to a variadic function
    /// too (x86-64, AArch64). Found with `dlsym` in the C library; where it is not found (a fully
    /// static binary), only the limit above applies.
    private static func notDumpable() {
        typealias Prctl = @convention(c) (Int32, UInt, UInt, UInt, UInt) -> Int32
        let setDumpable: Int32 = 4  // PR_SET_DUMPABLE, <linux/prctl.h>: Swift's Glibc module does not include it
        guard let symbol = dlsym(nil, "prctl") else { return }
        let prctl = unsafeBitCast(symbol, to: Prctl.self)
        _ = prctl(setDumpable, 0, 0, 0, 0)
    }
    #endif

    #if canImport(Glibc)
    private static func resource(_ value: __rlimit_resource) -> __rlimit_resource_t { __rlimit_resource_t(value.rawValue) }
    #else
    private static func resource(_ value: Int32) -> Int32 { value }
    #endif
}
