import Foundation
import OIDC
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `Secret.fromFile(atPath:)`: a client secret read only from a file of yours no one else may read.
@Suite("Secret from a file")
struct SecretFileTests {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("secret-file-\(UUID().uuidString)").path

    func file(_ name: String, _ text: String, mode: mode_t) throws -> String {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let path = directory + "/" + name
        try text.write(toFile: path, atomically: false, encoding: .utf8)
        chmod(path, mode)
        return path
    }

    @Test("read and trimmed from a 0600 file; refused, never shown, when others may read it, through a link, empty, too large or missing")
    func rules() throws {
        let good = try file("secret", "  s3cret-value\n", mode: 0o600)
        #expect(try Secret.fromFile(atPath: good) == Secret("s3cret-value"))

        let open = try file("open", "s3cret-value", mode: 0o640)
        let refused = #expect(throws: OIDCError.self) { try Secret.fromFile(atPath: open) }
        #expect(refused?.message.contains("chmod 600") == true && refused?.description.contains("s3cret") == false)

        let link = directory + "/link"
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: good)
        #expect(throws: OIDCError.self) { try Secret.fromFile(atPath: link) }

        let empty = try file("empty", " \n", mode: 0o600)
        #expect((#expect(throws: OIDCError.self) { try Secret.fromFile(atPath: empty) })?.message.contains("empty") == true)
        let large = try file("large", String(repeating: "x", count: Secret.maximumFileSize + 1), mode: 0o600)
        #expect((#expect(throws: OIDCError.self) { try Secret.fromFile(atPath: large) })?.code == .invalidArgument)
        #expect((#expect(throws: OIDCError.self) { try Secret.fromFile(atPath: directory + "/missing") })?.code == .invalidArgument)
    }
}
