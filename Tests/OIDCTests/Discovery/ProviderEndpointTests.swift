import Foundation
@testable import OIDC
import OIDCTesting
import Testing

@Suite("The provider's endpoint list, written once")
struct ProviderEndpointTests {
    static let issuer = "https://login.example.com"

    static func url(_ endpoint: ProviderEndpoint, _ host: String = "login.example.com") -> URL {
        URL(string: "https://\(host)/\(endpoint.member)")!
    }

    /// A metadata document that names every endpoint of the list, and an alias for every one that
    /// can have one.
    static func fullMetadata() throws -> ProviderMetadata {
        var document: [String: Any] = ["issuer": issuer, "response_types_supported": ["code"]]
        for endpoint in ProviderEndpoint.allCases { document[endpoint.member] = url(endpoint).absoluteString }
        document["mtls_endpoint_aliases"] = Dictionary(uniqueKeysWithValues: ProviderEndpoint.aliased.map { ($0.member, url($0, "mtls.example.com").absoluteString) })
        let json = try JSONSerialization.data(withJSONObject: document)
        return try ProviderMetadata(document: Array(json), expectedIssuer: issuer)
    }

    @Test("every endpoint is read from metadata, reaches the configuration, is merged over a preset, and its alias is applied")
    func everyEndpoint() throws {
        let metadata = try Self.fullMetadata()
        let configuration = try metadata.configuration()
        var preset = ProviderConfiguration(issuer: Self.issuer, authorizationEndpoint: nil)
        for endpoint in ProviderEndpoint.allCases { preset[keyPath: endpoint.configuration] = Self.url(endpoint, "preset.example.com") }
        let merged = preset.merging(metadata)
        let aliased = configuration.usingMutualTLSEndpointAliases()
        for endpoint in ProviderEndpoint.allCases {
            #expect(configuration[keyPath: endpoint.configuration] == Self.url(endpoint), "\(endpoint)")
            #expect(merged[keyPath: endpoint.configuration] == Self.url(endpoint), "\(endpoint)")
            #expect(preset.merging(try ProviderMetadata(document: Array(#"{"issuer":"\#(Self.issuer)","jwks_uri":"https://login.example.com/j","response_types_supported":["code"]}"#.utf8), expectedIssuer: Self.issuer))[keyPath: endpoint.configuration]
                == (endpoint == .jwks ? URL(string: "https://login.example.com/j") : Self.url(endpoint, "preset.example.com")), "\(endpoint)")
            if let alias = endpoint.alias {
                #expect(configuration.mutualTLSEndpointAliases[keyPath: alias] == Self.url(endpoint, "mtls.example.com"), "\(endpoint)")
                #expect(aliased[keyPath: endpoint.configuration] == Self.url(endpoint, "mtls.example.com"), "\(endpoint)")
            } else {
                #expect(aliased[keyPath: endpoint.configuration] == Self.url(endpoint), "\(endpoint)")
            }
        }
    }

    @Test("a stored login keeps every endpoint of its provider, the pushed authorization request endpoint too")
    func storedLoginKeepsEveryEndpoint() throws {
        let provider = try Self.fullMetadata().configuration()
        let login = StoredLogin(
            tokens: TokenSet(accessToken: Secret("at"), expiresAt: nil, scopes: [], receivedAt: Date(timeIntervalSince1970: 1_800_000_000)),
            issuer: Self.issuer, clientID: "c", provider: provider
        )
        let read = try StoredLogin(serialized: try login.serialized())
        for endpoint in ProviderEndpoint.allCases {
            #expect(read.provider?[keyPath: endpoint.configuration] == Self.url(endpoint), "\(endpoint)")
        }
    }

    @Test("the test provider's preset names the endpoints its discovery document names (and the device endpoint when it is not advertised)")
    func testProviderAgrees() async throws {
        var withoutPAR = TestProvider.Configuration()
        withoutPAR.pushedAuthorizationRequests = .notOffered
        var unadvertisedDevice = TestProvider.Configuration()
        unadvertisedDevice.deviceFlow.advertised = false
        for configuration in [TestProvider.Configuration(), withoutPAR, unadvertisedDevice] {
            try await withTestProvider(configuration) { provider in
                let metadata = try await ProviderDiscovery(transport: NIOHTTPTransport.shared).metadata(for: provider.issuer)
                let preset = provider.providerConfiguration
                for endpoint in ProviderEndpoint.allCases {
                    let expected = endpoint == .deviceAuthorization && !configuration.deviceFlow.advertised ? nil : preset[keyPath: endpoint.configuration]
                    #expect(metadata.endpoints[endpoint] == expected, "\(endpoint)")
                }
                #expect(preset.deviceAuthorizationEndpoint != nil)
                #expect((preset.pushedAuthorizationRequestEndpoint != nil) == (configuration.pushedAuthorizationRequests != .notOffered))
            }
        }
    }
}
