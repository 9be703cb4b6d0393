import Foundation
import OIDC
import Testing

@Suite("Swan preset")
struct SwanTests {
    @Test("endpoints, scope and confidential-client settings")
    func configuration() throws {
        let swan = ProviderConfiguration.swan
        #expect(swan.authorizationEndpoint?.absoluteString == "https://oauth.swan.io/oauth2/auth")
        #expect(swan.tokenEndpoint?.absoluteString == "https://oauth.swan.io/oauth2/token")
        #expect(swan.clientAuthentication == .clientSecretPost)
        var request = try AuthorizationRequest(provider: .swan, clientID: "LIVE_abc", redirectURI: "https://app.example/swan/callback")
        request.state = "st"
        request.nonce = "no"
        request.pkce = try PKCE(verifier: rfcVerifier)
        #expect(try request.url().absoluteString == "https://oauth.swan.io/oauth2/auth?client_id=LIVE_abc&redirect_uri=https%3A%2F%2Fapp.example%2Fswan%2Fcallback&response_type=code&scope=openid%20offline&state=st&nonce=no&code_challenge=\(rfcChallenge)&code_challenge_method=S256")
    }

    static let statuses: [(String, SwanConsentCallback.Status)] = [
        ("Accepted", .accepted), ("CustomerRefused", .customerRefused), ("OperationCommitting", .operationCommitting),
        ("CredentialRefused", .credentialRefused), ("Created", .created), ("Started", .started), ("Expired", .expired),
        ("Failed", .failed), ("Canceled", .canceled),
    ]

    @Test("every consent status is parsed", arguments: statuses)
    func status(raw: String, status: SwanConsentCallback.Status) throws {
        let url = try #require(URL(string: "https://app.example/swan/consent?consentId=c-1&env=Sandbox&status=\(raw)&resourceId=r-9"))
        let parsed = try SwanConsentCallback(url: url)
        #expect(parsed.consentID == "c-1")
        #expect(parsed.environment == .sandbox)
        #expect(parsed.status == status)
        #expect(parsed.resourceID == "r-9")
        #expect(parsed.status.rawValue == raw)
    }

    @Test("an unknown status and environment are kept, not dropped")
    func unknown() throws {
        let url = try #require(URL(string: "https://app.example/c?consentId=c-2&env=Staging&status=PendingReview"))
        let parsed = try SwanConsentCallback(url: url)
        #expect(parsed.status == .unknown("PendingReview"))
        #expect(parsed.environment == .unknown("Staging"))
        #expect(parsed.resourceID == nil)
        #expect(try SwanConsentCallback(url: #require(URL(string: "https://a/c?consentId=x&env=Live&status=Accepted"))).environment == .live)
    }

    @Test("missing or repeated parameters are refused", arguments: [
        "env=Live&status=Accepted", "consentId=c&status=Accepted", "consentId=c&env=Live", "consentId=&env=Live&status=Accepted",
        "consentId=c&env=Live&status=Accepted&status=Failed",
    ])
    func refused(query: String) throws {
        let url = try #require(URL(string: "https://app.example/c?\(query)"))
        #expect(throws: OIDCError.self) { try SwanConsentCallback(url: url) }
    }
}
