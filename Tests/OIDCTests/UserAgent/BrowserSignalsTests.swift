import Foundation
import OIDC
import OIDCTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A browser started while the caller ignores SIGINT (as `oidc login` does while it waits for Ctrl-C)
/// and from a thread that blocks signals still gets default dispositions and an empty mask: it can be
/// stopped like any program and does not outlive a closed terminal by accident.
@Suite("System browser: signals", .timeLimit(.scaledMinutes(1)))
struct BrowserSignalsTests {
    #if os(Linux)
    @Test("the browser starts with no blocked and no ignored signals")
    func cleanSignals() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("browser-signals-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let output = directory.appendingPathComponent("status").path
        let script = directory.appendingPathComponent("browser").path
        // exec, not a child of the shell: dash blocks every signal for a moment while it forks.
        try "#!/bin/sh\nexec grep -E '^Sig(Blk|Ign):' /proc/self/status > '\(output)'\n".write(toFile: script, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: script)

        let previous = signal(SIGINT, SIG_IGN)
        defer { signal(SIGINT, previous) }
        try await SystemBrowser(command: script).open(URL(string: "http://127.0.0.1:1/")!)
        let status = try String(contentsOfFile: output, encoding: .utf8)
        #expect(status.contains("SigBlk:\t0000000000000000"), "\(status)")
        let ignored = try #require(status.split(separator: "\n").first { $0.hasPrefix("SigIgn:") }?.split(separator: "\t").last)
        let mask = try #require(UInt64(ignored, radix: 16))
        #expect(mask & (1 << (UInt64(SIGINT) - 1)) == 0, "SIGINT is ignored in the browser: \(status)")
        #expect(mask & (1 << (UInt64(SIGTERM) - 1)) == 0)
    }

    @Test("the browser inherits no socket: the listener's port is free once the login ends, even while the browser runs on")
    func noInheritedSockets() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("browser-fds-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let output = directory.appendingPathComponent("fds").path
        let script = directory.appendingPathComponent("browser").path
        try "#!/bin/sh\nls -l /proc/$$/fd/ > '\(output)'\n".write(toFile: script, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: script)
        let listener = try await LoopbackRedirectListener.start()
        try await SystemBrowser(command: script).open(listener.startURL)
        await listener.close()
        let listing = try String(contentsOfFile: output, encoding: .utf8)
        #expect(listing.contains("/dev/null"), "\(listing)")
        #expect(!listing.contains("socket:"), "\(listing)")
        #expect(!listing.contains("anon_inode"), "\(listing)")
    }
    #endif
}
