import Foundation
import OIDC
import OIDCTesting
import OIDCTestSupport
import Testing

/// Rich authorization requests (RFC 9396) from the client's side: `AuthorizationDetails` checked
/// before anything is sent; sent on a pushed authorization request and on client credentials; the
/// token response's copy read, kept through a refresh and by a store. Against TestProvider over
/// loopback HTTP.
@Suite("Rich authorization requests (RFC 9396), the client's side", .timeLimit(.scaledMinutes(1)))
struct AuthorizationDetailsTests {
    static let payment = #"[{"type":"payment_initiation","instructedAmount":{"currency":"EUR","amount":"123.50"},"creditorName":"Merchant A"}]"#

    @Test("the value: an array of objects each with a type, at most 64 KiB; the description names the types only")
    func value() throws {
        let details = try AuthorizationDetails(json: Self.payment)
        #expect(details.types == ["payment_initiation"])
        #expect(details.parameter.name == "authorization_details")
        #expect(try AuthorizationDetails(json: details.jsonText) == details)
        #expect(!"\(details)".contains("Merchant") && "\(details)".contains("payment_initiation"))
        for bad in ["", "{}", "[]", "[1]", #"[{"amount":1}]"#, #"[{"type":""}]"#, #"[{"type":3}]"#, "[{\"type\":\"a\"}", "null",
                    "[" + String(repeating: #"{"type":"a"},"#, count: 7000) + #"{"type":"a"}]"#] {
            #expect(throws: OIDCError.self, "\(bad.prefix(40))") { try AuthorizationDetails(json: bad) }
        }
    }

    @Test("client credentials: sent as a parameter, answered in the token response; a type the provider does not take is invalid_authorization_details")
    func clientCredentials() async throws {
        var configuration = ServiceGrantsTests.configuration
        configuration.authorizationDetailsTypes = ["payment_initiation"]
        try await withTestProvider(configuration) { provider in
            let rp = try await provider.relyingParty(client: ServiceGrantsTests.daemon)
            let document = try await RawHTTPClient.get(provider.discoveryURL).json()
            #expect(document["authorization_details_types_supported"] as? [String] == ["payment_initiation"])
            let details = try AuthorizationDetails(json: Self.payment)
            let tokens = try await rp.tokenClient.clientCredentials(parameters: [details.parameter])
            #expect(tokens.authorizationDetails == details)
            #expect(try #require(await provider.tokenRequestParameters().last)["authorization_details"] == details.jsonText)
            // For a resource (RFC 8707), the JWT access token carries them (RFC 9396 §9.1), and introspection does (§9.2).
            let forResource = try await rp.tokenClient.clientCredentials(
                parameters: [details.parameter, OAuthParameter("resource", "https://api.example.com/")])
            let claims = try UnverifiedJWT(forResource.accessToken.revealedValue).claims
            #expect(claims["authorization_details"]?.arrayValue?.first?.objectValue?["type"]?.stringValue == "payment_initiation")
            let introspected = try await rp.tokenClient.introspect(forResource.accessToken)
            #expect(introspected.raw["authorization_details"]?.arrayValue?.count == 1, "\(introspected.raw)")
            let other = try AuthorizationDetails(json: #"[{"type":"account_information"}]"#)
            let refused = await #expect(throws: OIDCError.self) { try await rp.tokenClient.clientCredentials(parameters: [other.parameter]) }
            #expect(refused?.providerError?.error == "invalid_authorization_details", "\(String(describing: refused))")
        }
    }

    @Test("a pushed authorization request carries them; the login's tokens have them, a refresh keeps them, a store keeps them")
    func codeFlow() async throws {
        var configuration = PushedAuthorizationTests.configuration(.required)
        configuration.authorizationDetailsTypes = ["payment_initiation"]
        try await withTestProvider(configuration) { provider in
            let rp = try await provider.relyingParty()
            let details = try AuthorizationDetails(json: Self.payment)
            let request = try rp.authorizationRequest(redirectURI: PushedAuthorizationTests.redirectURI) {
                $0.additionalParameters.append(details.parameter)
            }
            let url = try await rp.authorizationURL(for: request)
            #expect(try #require(await provider.requestParameters(.pushedAuthorization).first)["authorization_details"] == details.jsonText)
            let login = try await rp.completeLogin(callback: try await RelyingPartyTests.callback(for: url, rp.transport), for: request)
            #expect(login.tokens.authorizationDetails == details)
            let refreshToken = try #require(login.tokens.refreshToken)
            let refreshed = login.tokens.refreshed(with: try await rp.tokenClient.refresh(refreshToken))
            #expect(refreshed.authorizationDetails == details)

            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("rar-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: directory) }
            let store = try FileKeychain(directory: directory)
            let key = TokenStoreKey(service: "oidc", account: "rar")
            try store.save(StoredLogin(tokens: refreshed, issuer: provider.issuer, clientID: rp.clientID, subject: "s"), for: key)
            #expect(try store.load(key)?.tokens.authorizationDetails == details)
        }
    }

    @Test("a token response whose authorization_details is not an array of typed objects is refused as malformed")
    func malformedAnswer() throws {
        let body = Array(#"{"access_token":"a","token_type":"Bearer","authorization_details":{"type":"x"}}"#.utf8)
        #expect(throws: OIDCError.self) { try TokenSet(tokenAnswer: body, requestedScopes: [], receivedAt: Date()) }
    }
}
