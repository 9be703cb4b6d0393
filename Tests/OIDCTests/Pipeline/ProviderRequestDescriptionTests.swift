import Foundation
@testable import OIDC
import Testing

/// A user's provider stage that prints or dumps what it sees must not write a secret.
@Suite("ProviderRequest prints no secret")
struct ProviderRequestDescriptionTests {
    @Test("print, String(reflecting:) and dump of a refresh request and its parameters: the refresh token, the client secret and the code verifier redacted, the rest shown")
    func redacted() throws {
        let client = TokenClient(
            provider: ProviderConfiguration(issuer: "https://idp.example", authorizationEndpoint: URL(string: "https://idp.example/authorize"), tokenEndpoint: URL(string: "https://idp.example/token")), clientID: "app",
            transport: NIOHTTPTransport.shared)
        let form = [
            OAuthParameter("grant_type", "refresh_token"), OAuthParameter("refresh_token", "rt-SECRET-1"),
            OAuthParameter("client_secret", "cs-SECRET-2"), OAuthParameter("code_verifier", "cv-SECRET-3"), OAuthParameter("x_tenant", "blue"),
        ]
        let request = ProviderRequest(
            call: .grant(.refreshToken), url: URL(string: "https://idp.example/token")!, form: form,
            headers: ["Authorization": "Basic SECRET-5", "Accept": "application/json"], client: client, secrets: [])
        var dumped = ""
        dump(request, to: &dumped)
        var dumpedForm = ""
        dump(form, to: &dumpedForm)
        for text in ["\(request)", String(reflecting: request), dumped, "\(form)", dumpedForm] {
            #expect(!text.contains("SECRET"), "\(text)")
        }
        #expect("\(request)".contains("grant_type=refresh_token") && "\(request)".contains("x_tenant=blue") && "\(request)".contains("refresh_token=<redacted>"), "\(request)")
    }
}
