import Foundation
import OIDC
import OIDCResourceServer
import OIDCTesting
import Testing

/// RFC 9396 on the resource server: a token's `authorization_details` (the JWT claim, §9.1) read
/// and exposed; a malformed one refused as an invalid token.
@Suite("Rich authorization requests (RFC 9396): the resource server's side", .timeLimit(.minutes(1)))
struct AuthorizationDetailsTests {
    static var payment: [String: Any] {
        [
        "type": "payment_initiation", "actions": ["initiate"], "instructedAmount": ["currency": "EUR", "amount": "123.50"],
        "creditorName": "Merchant A",
        ]
    }

    @Test("the details a token carries, in order, and those of one type; none: empty")
    func exposed() async throws {
        try await ResourceFixture.run { fixture in
            let token = try await fixture.token(extra: ["authorization_details": [Self.payment, ["type": "account_information", "actions": ["read"]]]])
            let access = try await fixture.server.verify(ResourceFixture.bearer(token))
            #expect(access.authorizationDetails.count == 2)
            let payments = access.authorizationDetails(ofType: "payment_initiation")
            #expect(payments.count == 1)
            #expect(payments.first?["creditorName"] == .string("Merchant A"))
            #expect(payments.first?["instructedAmount"]?.objectValue?["amount"] == .string("123.50"))
            #expect(access.authorizationDetails(ofType: "other").isEmpty)
            let plain = try await fixture.server.verify(ResourceFixture.bearer(try await fixture.token()))
            #expect(plain.authorizationDetails.isEmpty)
        }
    }

    @Test("a route that requires a detail type: a token with one passes; without (or with another type) 403 insufficient_scope, rule missing_authorization_detail, the challenge byte for byte")
    func requiredType() async throws {
        try await ResourceFixture.run { fixture in
            let paying = try await fixture.token(extra: ["authorization_details": [Self.payment]])
            let access = try await fixture.server.verify(ResourceFixture.bearer(paying), authorizationDetailTypes: ["payment_initiation"])
            #expect(access.authorizationDetails(ofType: "payment_initiation").count == 1)
            for token in [try await fixture.token(), try await fixture.token(extra: ["authorization_details": [["type": "account_information"]]])] {
                do throws(AccessRefusal) {
                    let through = try await fixture.server.verify(ResourceFixture.bearer(token), authorizationDetailTypes: ["payment_initiation"])
                    Issue.record("let through: \(through.authorizationDetails)")
                } catch {
                    #expect(error.status == 403 && error.error == "insufficient_scope" && error.rule == .missingAuthorizationDetail, "\(error)")
                    #expect(error.message == "The access token's authorization_details hold no detail of the type this request requires: payment_initiation (RFC 9396).")
                    #expect(error.headers.values("WWW-Authenticate").first?.hasPrefix(#"Bearer error="insufficient_scope", error_description="The access token's authorization_details hold no detail of the type this request requires: payment_initiation (RFC 9396).""#) == true, "\(error.headers)")
                }
            }
        }
    }

    @Test("authorization_details that is not an array of objects each with a string type: 401 invalid_token (invalid_claim)", arguments: [
        "object", "array of strings", "no type", "empty type", "type a number",
    ])
    func malformed(shape: String) async throws {
        let value: Any = switch shape {
        case "object": Self.payment
        case "array of strings": ["payment_initiation"]
        case "no type": [["actions": ["read"]]]
        case "empty type": [["type": ""]]
        default: [["type": 7]]
        }
        try await ResourceFixture.run { fixture in
            let token = try await fixture.token(extra: ["authorization_details": value])
            let refusal = try await fixture.refusal(ResourceFixture.bearer(token))
            #expect(refusal.status == 401 && refusal.error == "invalid_token" && refusal.rule == .invalidClaim, "\(refusal)")
            #expect(refusal.message.contains("authorization_details"))
        }
    }
}
