import Foundation
import OIDC
import Testing

/// Registrations kept per issuer (files 0600 in a private directory, or memory), the metadata
/// document read back as written, and the resource a stored login keeps.
@Suite("Registration stores and resource metadata")
struct RegistrationStoreTests {
    static let registration = ClientRegistration(
        issuer: "https://auth.example.com/tenant", clientID: "client-1", clientSecret: Secret("client-secret-value"),
        registrationAccessToken: Secret("registration-token-value"), registrationClientURI: URL(string: "https://auth.example.com/register/client-1"),
        redirectURIs: ["http://127.0.0.1:53682/callback"])

    @Test("a file store keeps one registration per issuer in a 0600 file, reads it back, and forgets it")
    func fileStore() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("oidc-registrations-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = try FileRegistrationStore(directory: URL(fileURLWithPath: directory))
        #expect(try await store.registration(for: Self.registration.issuer) == nil)
        try await store.save(Self.registration)
        let read = try await store.registration(for: Self.registration.issuer)
        #expect(read == Self.registration)
        #expect(read?.callbackPort == 53682)
        #expect(try await store.registration(for: "https://auth.example.com") == nil)
        let files = try FileManager.default.contentsOfDirectory(atPath: directory)
        #expect(files.count == 1)
        let attributes = try FileManager.default.attributesOfItem(atPath: directory + "/" + files[0])
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
        try await store.remove(for: Self.registration.issuer)
        #expect(try await store.registration(for: Self.registration.issuer) == nil)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory).isEmpty)
    }

    @Test("a registration's secrets are not in its description; an expired secret says so")
    func secretsHidden() {
        let text = String(describing: Self.registration) + String(reflecting: Self.registration)
        #expect(!text.contains("client-secret-value"))
        #expect(!text.contains("registration-token-value"))
        var expiring = Self.registration
        expiring.clientSecretExpiresAt = Date(timeIntervalSince1970: 100)
        #expect(expiring.isExpired(at: Date(timeIntervalSince1970: 100)))
        #expect(!Self.registration.isExpired(at: .distantFuture))
    }

    @Test("the metadata document reads back what the resource server writes; duplicates and no resource are refused")
    func metadataRoundTrip() throws {
        var written = ProtectedResourceMetadata(
            resource: try #require(URL(string: "https://mcp.example.com/mcp")), authorizationServers: ["https://auth.example.com"],
            scopesSupported: ["tools:read"], dpopSigningAlgorithms: [.es256], dpopBoundAccessTokensRequired: true)
        written.resourceName = "MCP"
        let read = try ProtectedResourceMetadata(json: written.json)
        #expect(read.jsonText == written.jsonText)
        #expect(read.resource.absoluteString == "https://mcp.example.com/mcp")
        for bad in [#"{"resource":"https://a.example","resource":"https://b.example"}"#, #"{"authorization_servers":[]}"#, #"{"resource":1}"#, "[]"] {
            let error = #expect(throws: OIDCError.self) { try ProtectedResourceMetadata(json: Array(bad.utf8)) }
            #expect(error?.code == .malformedResponse)
        }
    }

    @Test("a stored login keeps its resource through serialization")
    func storedLoginResource() async throws {
        let store = InMemoryTokenStore()
        var login = StoredLogin(
            tokens: TokenSet(accessToken: Secret("a"), tokenType: "Bearer", refreshToken: nil, idToken: nil, expiresAt: nil, scopes: [], receivedAt: Date()),
            issuer: "https://auth.example.com", clientID: "c")
        login.resource = "https://mcp.example.com/mcp"
        let key = TokenStoreKey(service: "s", account: "a")
        await store.save(login, for: key)
        #expect(try await store.load(key)?.resource == "https://mcp.example.com/mcp")
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("oidc-login-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let files = try FileKeychain(directory: URL(fileURLWithPath: directory))
        try files.save(login, for: key)
        #expect(try await files.load(key)?.resource == "https://mcp.example.com/mcp")
    }
}
