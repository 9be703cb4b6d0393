import Foundation
import OIDC
import Testing

@Suite("The stored login's JSON")
struct StoredLoginFormatTests {
    static func tokens() -> TokenSet {
        TokenSet(
            accessToken: Secret("at"), refreshToken: Secret("rt"), idToken: Secret("it"), expiresAt: Date(timeIntervalSince1970: 1_800_000_000),
            scopes: ["openid", "offline_access"], receivedAt: Date(timeIntervalSince1970: 1_799_996_400)
        )
    }

    @Test("a login with its provider and a refresh mark reads back equal; the mark is also written where earlier versions look")
    func roundTrip() throws {
        var provider = ProviderConfiguration.schibsted(.pre)
        provider.revocationEndpoint = URL(string: "https://identity-pre.schibsted.com/oauth/revoke")
        provider.clientAuthentication = .clientSecretBasic
        provider.deviceAuthorizationEndpoint = URL(string: "https://identity-pre.schibsted.com/oauth/device")
        provider.introspectionEndpoint = URL(string: "https://identity-pre.schibsted.com/oauth/introspect")
        var login = StoredLogin(tokens: Self.tokens(), issuer: provider.issuer, clientID: "c", subject: "u", provider: provider, attributes: ["profile": "work"])
        login.refreshMark = RefreshMark(id: "mark-1", began: Date(timeIntervalSince1970: 1_800_000_000.123))
        let bytes = try login.serialized()
        #expect(try StoredLogin(serialized: bytes) == login)
        let object = try StrictJSON.parseObject(bytes)
        #expect(object["attributes"]?.objectValue?["oidc.refresh-in-flight"]?.stringValue == "mark-1 1800000000123")
        #expect(object["provider"]?.objectValue?["token_request_headers"] == .array([.array([.string("X-OIDC"), .string("v1")])]))

        var plain = StoredLogin(tokens: Self.tokens(), issuer: "https://idp.example", clientID: "c")
        plain.provider = ProviderConfiguration(issuer: "https://idp.example", authorizationEndpoint: nil, tokenEndpoint: URL(string: "https://idp.example/t"))
        #expect(try StoredLogin(serialized: try plain.serialized()) == plain)
    }

    @Test("a file of an earlier version reads as it is: no provider, its attributes kept, its mark attribute read as the mark")
    func earlierVersion() throws {
        let json = #"{"attributes":{"oidc.refresh-in-flight":"other 1800000000000","token_endpoint":"https://idp.example/t"},"client_id":"c","issuer":"https://idp.example","subject":"u","tokens":{"access_token":"at","received_at":1799996400,"scope":"openid","token_type":"Bearer"},"version":1}"#
        let login = try StoredLogin(serialized: Array(json.utf8))
        #expect(login.provider == nil)
        #expect(login.attributes == ["token_endpoint": "https://idp.example/t"])
        #expect(login.refreshMark == RefreshMark(id: "other", began: Date(timeIntervalSince1970: 1_800_000_000)))
    }

    @Test("a provider member of the wrong shape is a corrupt login, not a guess", arguments: [
        #""provider":"https://idp.example""#,
        #""provider":{"issuer":"https://idp.example","token_endpoint":7,"default_scopes":[],"token_endpoint_auth_method":"none","issuer_matching":"exact"}"#,
        #""provider":{"issuer":"https://idp.example","default_scopes":[],"token_endpoint_auth_method":"rot13","issuer_matching":"exact"}"#,
        #""provider":{"issuer":"https://idp.example","default_scopes":[],"token_endpoint_auth_method":"none","issuer_matching":"exact","token_request_headers":[["X-OIDC"]]}"#,
    ])
    func corruptProvider(member: String) throws {
        let json = #"{"client_id":"c","issuer":"https://idp.example",\#(member),"tokens":{"access_token":"at","received_at":1,"token_type":"Bearer"},"version":1}"#
        let error = #expect(throws: OIDCError.self) { try StoredLogin(serialized: Array(json.utf8)) }
        #expect(error?.code == .corruptStore)
    }
}
