import Foundation
import OIDC
import OIDCTestSupport
import Testing

/// Rich authorization requests (RFC 9396) against glewlwyd 2.7.5's `oidc-ciba` issuer, which
/// `scripts/glewlwyd.sh start` provisions with the types `payment_initiation` and
/// `account_information` for the client `swift-rar` (docs/glewlwyd.md): the details go on the
/// authorization request, the user consents to each type (the test user agent does, as glewlwyd's
/// page would), and the token response carries what was granted.
@Suite(
    "Interop with glewlwyd: rich authorization requests", .timeLimit(.scaledMinutes(4)), .glewlwydExclusive,
    .enabled(if: ProcessInfo.processInfo.environment["OIDC_GLEWLWYD_CIBA_ISSUER"] != nil, "set OIDC_GLEWLWYD_CIBA_ISSUER (make test-package does: scripts/glewlwyd.sh start)")
)
struct GlewlwydRARInteropTests {
    typealias Interop = GlewlwydInteropTests

    static let payment = #"[{"type":"payment_initiation","locations":["https://bank.example/payments"],"actions":["initiate"],"instructedAmount":{"currency":"EUR","amount":"12.00"},"creditorName":"Merchant A"}]"#

    static func relyingParty() async throws -> RelyingParty {
        try await RelyingParty.discover(
            issuer: try Interop.variable("CIBA_ISSUER"), clientID: try Interop.variable("RAR_CLIENT_ID"), clientSecret: try Interop.secret("RAR_CLIENT_SECRET_FILE"))
    }

    @Test("a payment's authorization_details on the authorization request: the user consents, the tokens carry the details as asked")
    func payment() async throws {
        let redirectURI = try Interop.variable("REDIRECT_URI")
        let rp = try await Self.relyingParty()
        let details = try AuthorizationDetails(json: Self.payment)
        var request = try rp.authorizationRequest(redirectURI: redirectURI, scopes: ["openid", Interop.scope])
        request.additionalParameters.append(details.parameter)
        let url = try await rp.authorizationURL(for: request)
        let agent = try await Interop.Agent.run(["authorize", url.absoluteString])
        let line = agent.output.split(separator: "\n").map(String.init).first { $0.hasPrefix(redirectURI) }
        let callback = try #require(line.flatMap(URL.init(string:)), "\(agent.output)")
        let login = try await rp.completeLogin(callback: callback, for: request)
        let granted = try #require(login.tokens.authorizationDetails, "glewlwyd sent no authorization_details")
        #expect(granted.types == ["payment_initiation"])
        #expect(granted.elements.first?.objectValue?["creditorName"]?.stringValue == "Merchant A", "\(granted.jsonText)")
    }

    @Test("a type the client may not use is refused at the authorization endpoint: an error callback, no code")
    func unknownType() async throws {
        let redirectURI = try Interop.variable("REDIRECT_URI")
        let rp = try await Self.relyingParty()
        var request = try rp.authorizationRequest(redirectURI: redirectURI, scopes: ["openid", Interop.scope])
        request.additionalParameters.append(try AuthorizationDetails(json: #"[{"type":"crypto_transfer"}]"#).parameter)
        let agent = try await Interop.Agent.run(["authorize", try await rp.authorizationURL(for: request).absoluteString])
        let line = agent.output.split(separator: "\n").map(String.init).first { $0.hasPrefix(redirectURI) }
        let callback = try #require(line.flatMap(URL.init(string:)), "\(agent.output)")
        let error = await #expect(throws: OIDCError.self) { try await rp.completeLogin(callback: callback, for: request) }
        #expect(error?.providerError?.error == "invalid_request", "\(String(describing: error))")
    }
}
