import Foundation
import OIDC
import OIDCTesting
import Testing

/// Signed tokens whose claims are hostile: the signature is fine, so only the claim reader and the
/// rules stand between them and a crash or a wrong answer.
@Suite("Hostile claims in validly signed tokens")
struct HostileClaimsTests {
    let key: TestSigningKey
    let keys: JWKSet

    init() throws {
        key = try TestSigningKey.generate(.es256, keyID: "k1")
        keys = try JWKSet(json: key.jwksJSON)
    }

    func token(_ payload: String) throws -> String {
        try key.sign(headerJSON: #"{"alg":"ES256","kid":"k1"}"#, payloadJSON: payload)
    }

    @Test("dates far outside years 1–9999 are invalid claims, not a crash", arguments: ["-1e300", "1e300", "-9.3e18", "253402300800"])
    func hugeDates(value: String) throws {
        let payload = #"{"iss":"https://idp.example","sub":"u","aud":"client-1","exp":\#(value),"iat":1799999990,"nonce":"nonce-1"}"#
        expectRejection(.invalidClaim, try token(payload), keys: keys)
    }

    @Test("a long member name whose length wraps past 255 is not taken for iss")
    func wrappedName() throws {
        let fake = "iss" + String(repeating: "\\u0000", count: 4) + String(repeating: "x", count: 252)
        let payload = #"{"\#(fake)":"https://idp.example","sub":"u","aud":"client-1","exp":1800000600,"iat":1799999990,"nonce":"nonce-1"}"#
        expectRejection(.invalidClaim, try token(payload), keys: keys)
        // And two different long names are not duplicates.
        let a = String(repeating: "a", count: 259), b = String(repeating: "a", count: 3)
        let both = #"{"\#(a)":1,"\#(b)":2,"iss":"https://idp.example","sub":"u","aud":"client-1","exp":1800000600,"iat":1799999990,"nonce":"nonce-1"}"#
        _ = try verifier().verify(try token(both), keys: keys, now: testNow)
    }

    @Test("a verifier with a non-finite leeway or clock offset refuses to judge instead of trapping")
    func nonFiniteSettings() throws {
        let valid = try key.sign(claims: standardClaims())
        for configure in [{ (v: inout IDTokenVerifier) in v.leeway = .nan }, { $0.leeway = .infinity }, { $0.clockOffset = -.infinity }, { $0.leeway = -1 }] {
            let error = #expect(throws: OIDCError.self) { try verifier(configure).verify(valid, keys: keys, now: testNow) }
            #expect(error?.code == .invalidArgument)
        }
    }

    @Test("control characters in a duplicate member name do not reach the message")
    func escapedDuplicate() throws {
        let error = #expect(throws: OIDCError.self) {
            try verifier().verify(try token(#"{"\u001b[31m":1,"\u001b[31m":2}"#), keys: keys, now: testNow)
        }
        #expect(error?.code == .malformedToken)
        #expect(!(error?.message.contains("\u{1b}") ?? true))
    }
}
