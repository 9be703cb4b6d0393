import Foundation
import OIDC
import OIDCTesting
import OIDCTestSupport
import Testing

/// Registration under the store's lock: first logins that start at once (tasks, or processes
/// sharing a directory) find no client, yet register only one.
@Suite("First logins at once register one client", .timeLimit(.scaledMinutes(1)))
struct ConcurrentRegistrationTests {
    static func clientIDs(_ resource: URL, stores: [any RegistrationStore], count: Int) async throws -> [String] {
        try await withThrowingTaskGroup(of: String.self) { group in
            for index in 0..<count {
                let store = stores[index % stores.count]
                group.addTask { try await RelyingParty.forResource(resource, registrations: store).clientID }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
    }

    @Test("4 relying parties at once through two file stores on one directory (as two processes have): one registration, one client; the lock file is 0600")
    func fileStores() async throws {
        try await withTestProvider(ForResourceTests.plainOAuth()) { provider in
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("oidc-registrations-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: directory) }
            let stores: [any RegistrationStore] = [try FileRegistrationStore(directory: directory), try FileRegistrationStore(directory: directory)]
            let resource = try #require(URL(string: provider.resourceURL))
            let ids = try await Self.clientIDs(resource, stores: stores, count: 4)
            #expect(Set(ids).count == 1, "\(ids)")
            #expect(await provider.registrationCount() == 1)
            let files = try FileManager.default.contentsOfDirectory(atPath: directory.path)
            #expect(files.filter { $0.hasSuffix(".json") }.count == 1, "\(files)")
            for file in files {
                let attributes = try FileManager.default.attributesOfItem(atPath: directory.appendingPathComponent(file).path)
                #expect(attributes[.posixPermissions] as? Int == 0o600, "\(file)")
            }
        }
    }

    @Test("4 relying parties at once through one in-memory store: one registration, one client")
    func memoryStore() async throws {
        try await withTestProvider(ForResourceTests.plainOAuth()) { provider in
            let resource = try #require(URL(string: provider.resourceURL))
            let ids = try await Self.clientIDs(resource, stores: [InMemoryRegistrationStore()], count: 4)
            #expect(Set(ids).count == 1, "\(ids)")
            #expect(await provider.registrationCount() == 1)
        }
    }
}
