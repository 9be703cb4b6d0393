import Foundation
import OIDC
import OIDCTesting
import OIDCTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Hardening 5, faults: a full disk before a refresh at a provider that rotates refresh tokens, a
/// save killed between its complete temporary file and the rename, and 16 processes at an expiry.
/// Run as the built binary against TestProvider over loopback HTTP.
@Suite("Store faults: a full disk, a save cut short, 16 processes at an expiry", .timeLimit(.scaledMinutes(3)))
struct StoreFaultTests {
    static let key = TokenStoreKey(service: "oidc", account: "work")

    /// A file system that can fill up: a 256 KiB tmpfs mounted at a new directory when this process
    /// may mount one (root); `nil` otherwise (then the store's injected full disk stands in).
    final class SmallFileSystem {
        let path: String

        init?() {
            let path = FileManager.default.temporaryDirectory.appendingPathComponent("oidc-full-\(UUID().uuidString)").path
            guard mkdir(path, 0o700) == 0 else { return nil }
            guard mount("tmpfs", path, "tmpfs", 0, "size=256k,mode=0700") == 0 else {
                rmdir(path)
                return nil
            }
            self.path = path
        }

        /// Fills the file system with a file of zeros, written until it is refused: no room is left.
        func fill() -> String {
            let filler = path + "/filler"
            let fd = open(filler, O_CREAT | O_WRONLY | O_TRUNC, 0o600)
            let chunk = [UInt8](repeating: 0, count: 4096)
            while fd >= 0, chunk.withUnsafeBytes({ write(fd, $0.baseAddress, $0.count) }) > 0 {}
            // The last bytes a page would not hold.
            while fd >= 0, chunk.withUnsafeBytes({ write(fd, $0.baseAddress, 1) }) > 0 {}
            close(fd)
            return filler
        }

        deinit {
            umount2(path, Int32(MNT_DETACH))
            rmdir(path)
        }
    }

    @Test("a full disk before a refresh: exit 7 before anything is sent, the login kept; once there is room the login refreshes (rotating tokens)")
    func fullDiskBeforeTheRefresh() async throws {
        try await withTestProvider { provider in
            let small = SmallFileSystem()
            let store = small.map { $0.path + "/store" } ?? TokenCommandTests.temporaryStore()
            let tokens = try await TokenCommandTests.inject(provider, store: store)
            // The disk fills up (or, where no file system can be mounted, the store's writes fail as on one).
            let filler = small?.fill()
            let full = filler == nil ? ["OIDC_TEST_STORE_FULL": "1"] : [:]
            let refused = try await OIDCBinary.run(["token", "--store", store, "--profile", "work"], environment: full)
            #expect(refused.status == 7, "\(refused.stderr)")
            #expect(refused.stdout.isEmpty)
            #expect(refused.stderr.contains("no room"), "\(refused.stderr)")
            #expect(refused.stderr.contains("the refresh was not sent"), "\(refused.stderr)")
            #expect(refused.stderr.contains("still works"), "\(refused.stderr)")
            #expect(!refused.stderr.contains("left as it was"))
            #expect(await provider.grantCount("refresh_token") == 0, "the refresh token was spent though its answer could not be kept")
            let kept = try #require(try FileKeychain(directory: URL(fileURLWithPath: store)).load(Self.key))
            #expect(kept.tokens.refreshToken == tokens.refreshToken)

            // Room again: the kept refresh token is still the live one.
            if let filler { unlink(filler) }
            let after = try await OIDCBinary.run(["token", "--store", store, "--profile", "work"])
            #expect(after.status == 0, "\(after.stderr)")
            #expect(await provider.grantCount("refresh_token") == 1)
            let token = after.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
            #expect(try await TokenCommandTests.resourceStatus(provider, token: token) == 200)
            let stored = try #require(try FileKeychain(directory: URL(fileURLWithPath: store)).load(Self.key))
            #expect(stored.tokens.refreshToken != tokens.refreshToken)
            #expect(!FileManager.default.fileExists(atPath: store + "/oidc@work.json.reserve"), "the reservation outlived the save")
        }
    }

    @Test("a login into a full store: exit 7 before the browser opens, nothing asked of the provider; with room, the same login works")
    func fullDiskBeforeTheLogin() async throws {
        try await withTestProvider { provider in
            let sandbox = LoginSandbox()
            let small = SmallFileSystem()
            let store = small.map { $0.path + "/store" } ?? TokenCommandTests.temporaryStore()
            let filler = small?.fill()
            let full = filler == nil ? ["OIDC_TEST_STORE_FULL": "1"] : [:]
            let arguments = ["login", "--issuer", provider.issuer, "--client-id", "test-client", "--store", store, "--profile", "work"]
            let refused = try await sandbox.run(arguments, extra: full)
            #expect(refused.status == 7, "\(refused.stderr)")
            #expect(refused.stderr.contains("Nothing was sent and no browser opened"), "\(refused.stderr)")
            #expect(refused.stderr.contains("--store DIR"), "\(refused.stderr)")
            #expect(sandbox.log.isEmpty, "the browser was started")
            #expect(await provider.grantCount("authorization_code") == 0)
            if let filler { unlink(filler) }
            let signedIn = try await sandbox.run(arguments)
            #expect(signedIn.status == 0, "\(signedIn.stderr)")
            #expect(try FileKeychain(directory: URL(fileURLWithPath: store)).load(Self.key) != nil)
        }
    }

    @Test("a save killed after its temporary file was complete, before the rename: the next oidc token adopts it and refreshes with the rotated token")
    func completeTemporaryFileAdopted() async throws {
        try await withTestProvider { provider in
            let store = TokenCommandTests.temporaryStore()
            let original = try await TokenCommandTests.inject(provider, store: store)
            // The rotated login, written as the store writes it: a refresh made in a copy of the store.
            let copy = TokenCommandTests.temporaryStore()
            try FileManager.default.createDirectory(atPath: copy, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            try FileManager.default.copyItem(atPath: store + "/oidc@work.json", toPath: copy + "/oidc@work.json")
            let rotated = try await OIDCBinary.run(["token", "--store", copy, "--profile", "work"])
            #expect(rotated.status == 0, "\(rotated.stderr)")
            #expect(await provider.grantCount("refresh_token") == 1)
            let bytes = try Data(contentsOf: URL(fileURLWithPath: copy + "/oidc@work.json"))
            // What the killed writer left: the complete temporary file beside the login it was to replace.
            let temporary = store + "/oidc@work.json.tmp-00c0ffee00c0ffee"
            #expect(FileManager.default.createFile(atPath: temporary, contents: bytes, attributes: [.posixPermissions: 0o600]))
            // And an incomplete one, newer still, which is never taken for a login.
            let torn = store + "/oidc@work.json.tmp-00000000deadbeef"
            #expect(FileManager.default.createFile(atPath: torn, contents: bytes.prefix(bytes.count / 2), attributes: [.posixPermissions: 0o600]))

            let next = try await OIDCBinary.run(["token", "--store", store, "--profile", "work", "--force-refresh"])
            #expect(next.status == 0, "the spent refresh token was used: \(next.stderr)")
            #expect(await provider.grantCount("refresh_token") == 2)
            let stored = try #require(try FileKeychain(directory: URL(fileURLWithPath: store)).load(Self.key))
            #expect(stored.tokens.refreshToken != original.refreshToken)
            #expect(!FileManager.default.fileExists(atPath: temporary), "the complete temporary file was not adopted")
            #expect(try await TokenCommandTests.resourceStatus(provider, token: next.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) == 200)
        }
    }
}
