import Foundation
import OIDCTesting
import OIDCTestSupport
import Testing

/// `oidc` holds tokens and client secrets in memory: it turns core dumps off first thing (review 3, I2).
@Suite("No core dumps of oidc", .timeLimit(.scaledMinutes(2)))
struct CoreDumpTests {
    /// A field of `/proc/PID/limits`, such as "Max core file size": its soft and hard values.
    static func limit(_ name: String, of pid: Int32) throws -> (soft: String, hard: String) {
        let text = try String(contentsOfFile: "/proc/\(pid)/limits", encoding: .utf8)
        let line = try #require(text.split(separator: "\n").first { $0.hasPrefix(name) })
        let fields = line.dropFirst(name.count).split(separator: " ")
        return (String(fields[0]), String(fields[1]))
    }

    static let setpriv = "/usr/bin/setpriv"

    /// `sh` arguments that run the rest as `nobody` when this test runs as root (setpriv), as is.
    static func asUser(_ arguments: [String]) -> (arguments: [String], user: uid_t) {
        guard getuid() == 0, FileManager.default.isExecutableFile(atPath: setpriv) else { return (arguments, getuid()) }
        return ([setpriv, "--reuid=65534", "--regid=65534", "--clear-groups"] + arguments, 65534)
    }

    /// Starts `oidc provider` (a process that stays up) through `sh`, which first raises the core file
    /// limit, as a shell with `ulimit -c unlimited` would; as `nobody` when run as root.
    static func startProvider() async throws -> ChildProcess {
        let process = try ChildProcess(
            "/bin/sh", ["-c", #"ulimit -c 8192 && exec "$@""#, "sh"] + asUser([OIDCBinary.url.path, "provider", "--port", "0"]).arguments,
            environment: ["PATH": "/usr/bin:/bin", "HOME": "/"])
        // The issuer on stdout: the provider is up, long after main's first statement.
        #expect(await process.output().hasPrefix("http://127.0.0.1:"))
        return process
    }

    /// Whether another process of the same user may read `/proc/PID/environ`: it may unless the
    /// process is not dumpable (the kernel's ptrace access check).
    static func environIsReadable(_ pid: Int32) async throws -> Bool {
        let reader = try ChildProcess(
            "/bin/sh", ["-c", #"exec "$@" < /dev/null > /dev/null 2>&1"#, "sh"] + asUser(["/usr/bin/head", "-c", "1", "/proc/\(pid)/environ"]).arguments)
        return await reader.exitStatus() == 0
    }

    @Test("every oidc run starts with a core file limit of 0 and not dumpable, whatever limit it was started with")
    func coreDumpsOff() async throws {
        // The shell really raises the limit (so the check below is oidc's doing, not the environment's).
        let shell = try ChildProcess("/bin/sh", ["-c", "ulimit -c 8192 && exec cat /proc/self/limits"])
        var limits = ""
        for _ in 0..<1000 {
            let chunk = await shell.output()
            if chunk.isEmpty { break }
            limits += chunk
        }
        _ = await shell.exitStatus()
        let raised = try #require(limits.split(separator: "\n").first { $0.hasPrefix("Max core file size") })
        #expect(!raised.hasPrefix("Max core file size        0 "), "\(raised)")

        let process = try await Self.startProvider()
        defer {
            process.signal(SIGINT)
            _ = process.waitForExit()
        }
        let core = try Self.limit("Max core file size", of: process.pid)
        #expect(core.soft == "0", "\(core)")
        // The reading process has the same user as oidc: only "not dumpable" keeps it out.
        #expect(try await !Self.environIsReadable(process.pid), "another process of the same user read oidc's environment")
        // The check can tell: a shell of that user, dumpable, is readable.
        let dumpable = try ChildProcess("/bin/sh", ["-c", "exec \"$@\"", "sh"] + Self.asUser(["/bin/sleep", "30"]).arguments)
        defer {
            dumpable.signal(SIGKILL)
            _ = dumpable.waitForExit()
        }
        try await Task.sleep(for: .milliseconds(300))
        #expect(try await Self.environIsReadable(dumpable.pid))
    }
}
