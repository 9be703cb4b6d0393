import Foundation
import OIDC
import OIDCTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A browser program written a moment ago may still be open for writing somewhere (in the child of a
/// spawn another thread started meanwhile): exec refuses it with ETXTBSY until that copy closes. The
/// launch tries again for a short, bounded while, and says the system's reason when it gives up.
@Suite("System browser: a program still open for writing", .timeLimit(.scaledMinutes(1)))
struct BrowserBusyExecutableTests {
    #if os(Linux)
    /// A directory with `browser`, a script that records it ran, and the descriptor it was written
    /// through, still open for writing.
    func withOpenScript(_ body: (_ script: String, _ ran: String, _ descriptor: Int32) async throws -> Void) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("browser-busy-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let script = directory.appendingPathComponent("browser").path
        let ran = directory.appendingPathComponent("ran").path
        let descriptor = open(script, O_WRONLY | O_CREAT | O_CLOEXEC, 0o755)
        try #require(descriptor >= 0)
        let text = "#!/bin/sh\necho yes > '\(ran)'\n"
        #expect(text.withCString { write(descriptor, $0, strlen($0)) } == text.utf8.count)
        try await body(script, ran, descriptor)
    }

    @Test("held open throughout: the error says the browser could not be started and why, after a bounded wait")
    func heldOpen() async throws {
        try await withOpenScript { script, ran, descriptor in
            defer { close(descriptor) }
            let error = await #expect(throws: OIDCError.self) {
                try await SystemBrowser(command: script).open(URL(string: "http://127.0.0.1:1/")!)
            }
            #expect(error?.code == .invalidArgument)
            #expect(error?.message.contains("could not be started (Text file busy)") == true, "\(String(describing: error))")
            #expect(!FileManager.default.fileExists(atPath: ran))
        }
    }

    @Test("closed a moment after the first refusal: the browser starts")
    func closedSoon() async throws {
        try await withOpenScript { script, ran, descriptor in
            // Closed from another thread once the launch is under way; the retries outlast it.
            let closer = Thread { usleep(5_000); close(descriptor) }
            closer.start()
            try await SystemBrowser(command: script).open(URL(string: "http://127.0.0.1:1/")!)
            let deadline = ContinuousClock.now + .scaled(.seconds(10))
            while !FileManager.default.fileExists(atPath: ran), ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(20))
            }
            #expect(FileManager.default.fileExists(atPath: ran))
        }
    }
    #endif
}
