import Foundation
import OIDC
import OIDCTesting
import Testing

/// OIDC Core §3.1.3.7 claim rules, each just inside and just outside its bound.
@Suite("ID-token claim rules")
struct ClaimValidationTests {
    let key: TestSigningKey
    let keys: JWKSet

    init() throws {
        key = try TestSigningKey.generate(.es256, keyID: "k1")
        keys = try JWKSet(json: key.jwksJSON)
    }

    func accept(_ claims: [String: Any], now: Date = testNow, _ configure: (inout IDTokenVerifier) -> Void = { _ in }, sourceLocation: SourceLocation = #_sourceLocation) throws {
        _ = try verifier(configure).verify(try key.sign(claims: claims), keys: keys, now: now)
    }

    func reject(_ code: OIDCError.Code, _ claims: [String: Any], now: Date = testNow, _ configure: (inout IDTokenVerifier) -> Void = { _ in }, sourceLocation: SourceLocation = #_sourceLocation) throws {
        expectRejection(code, try key.sign(claims: claims), keys: keys, verifier: verifier(configure), now: now, sourceLocation: sourceLocation)
    }

    @Test("exp: accepted up to the leeway after expiry, refused at it")
    func expiry() throws {
        let exp = 1_800_000_000.0
        try accept(standardClaims(["exp": exp]), now: Date(timeIntervalSince1970: exp + 59))
        try reject(.tokenExpired, standardClaims(["exp": exp]), now: Date(timeIntervalSince1970: exp + 60))
        try accept(standardClaims(["exp": exp]), now: Date(timeIntervalSince1970: exp + 299)) { $0.leeway = 300 }
        try reject(.tokenExpired, standardClaims(["exp": exp]), now: Date(timeIntervalSince1970: exp + 1)) { $0.leeway = 0 }
        try reject(.invalidClaim, standardClaims(["exp": nil]))
        try reject(.invalidClaim, standardClaims(["exp": "1800000600"]))
    }

    @Test("iat: accepted up to the leeway in the future, refused beyond")
    func issuedAt() throws {
        try accept(standardClaims(["iat": 1_800_000_060]))
        try reject(.tokenNotYetValid, standardClaims(["iat": 1_800_000_061]))
        try reject(.invalidClaim, standardClaims(["iat": nil]))
        try reject(.invalidClaim, standardClaims(["iat": true]))
    }

    @Test("the provider's clock offset shifts now")
    func clockOffset() throws {
        try reject(.tokenNotYetValid, standardClaims(["iat": 1_800_000_500]))
        try accept(standardClaims(["iat": 1_800_000_500])) { $0.clockOffset = 450 }
    }

    @Test("nbf: honoured with the leeway")
    func notBefore() throws {
        try accept(standardClaims(["nbf": 1_800_000_060]))
        try reject(.tokenNotYetValid, standardClaims(["nbf": 1_800_000_061]))
    }

    @Test("iss: exact, or ignoring one trailing slash when asked")
    func issuer() throws {
        try reject(.issuerMismatch, standardClaims(["iss": "https://evil.example"]))
        try reject(.issuerMismatch, standardClaims(["iss": testIssuer + "/"]))
        try accept(standardClaims(["iss": testIssuer + "/"])) { $0.issuerMatching = .ignoringTrailingSlash }
        try reject(.issuerMismatch, standardClaims(["iss": testIssuer + "//"])) { $0.issuerMatching = .ignoringTrailingSlash }
        try reject(.invalidClaim, standardClaims(["iss": nil]))
    }

    @Test("sub is required")
    func subject() throws {
        try reject(.invalidClaim, standardClaims(["sub": nil]))
        try reject(.invalidClaim, standardClaims(["sub": ""]))
        try reject(.invalidClaim, standardClaims(["sub": 42]))
    }

    @Test("aud must contain the client; several audiences need azp equal to the client")
    func audience() throws {
        try reject(.audienceMismatch, standardClaims(["aud": "other"]))
        try accept(standardClaims(["aud": ["client-1"]]))
        try reject(.invalidClaim, standardClaims(["aud": ["client-1", "api"]]))
        try accept(standardClaims(["aud": ["client-1", "api"], "azp": "client-1"]))
        try reject(.invalidClaim, standardClaims(["aud": ["client-1", "api"], "azp": "api"]))
        try reject(.invalidClaim, standardClaims(["aud": "client-1", "azp": "someone-else"]))
        try reject(.invalidClaim, standardClaims(["aud": []]))
        try reject(.invalidClaim, standardClaims(["aud": nil]))
        try reject(.invalidClaim, standardClaims(["aud": ["client-1", 7]]))
    }

    @Test("nonce: must equal the one sent; must be absent when none was sent")
    func nonce() throws {
        try reject(.nonceMismatch, standardClaims(["nonce": "nonce-2"]))
        try reject(.nonceMismatch, standardClaims(["nonce": nil]))
        try reject(.nonceMismatch, standardClaims()) { $0.nonce = .absent }
        try accept(standardClaims(["nonce": nil])) { $0.nonce = .absent }
        try accept(standardClaims(["nonce": "whatever"])) { $0.nonce = .notChecked }
    }

    @Test("at_hash: left half of the access token's hash, checked when both are present")
    func accessTokenHash() throws {
        let accessToken = "ya29.access-token-value"
        let digest = try LibCrypto.digest(Array(accessToken.utf8), name: "SHA256")
        let atHash = Base64URL.encode(digest.prefix(16))
        try accept(standardClaims(["at_hash": atHash])) { $0.accessToken = Secret(accessToken) }
        try reject(.invalidClaim, standardClaims(["at_hash": atHash])) { $0.accessToken = Secret(accessToken + "x") }
        try accept(standardClaims()) { $0.accessToken = Secret(accessToken) }  // optional in the code flow
    }

    @Test("auth_time with max_age: accepted up to max_age plus the leeway, refused beyond or when missing")
    func authTime() throws {
        let authTime = 1_800_000_000.0 - 300 - 60
        try accept(standardClaims(["auth_time": authTime])) { $0.maxAge = 300 }
        try reject(.invalidClaim, standardClaims(["auth_time": authTime - 1])) { $0.maxAge = 300 }
        try reject(.invalidClaim, standardClaims(["auth_time": nil])) { $0.maxAge = 300 }
        try accept(standardClaims(["auth_time": nil]))
    }

    @Test("acr and amr when required (Schibsted MFA: eid-se shows eid)")
    func acrAndAMR() throws {
        try accept(standardClaims(["acr": "urn:silver"])) { $0.acceptedACRValues = ["urn:silver", "urn:gold"] }
        try reject(.invalidClaim, standardClaims(["acr": "urn:bronze"])) { $0.acceptedACRValues = ["urn:silver"] }
        try reject(.invalidClaim, standardClaims()) { $0.acceptedACRValues = ["urn:silver"] }
        try accept(standardClaims(["amr": ["pwd", "eid"]])) { $0.requiredAMRValues = [Schibsted.MFAMethod.eidSE.amrValue] }
        try reject(.invalidClaim, standardClaims(["amr": ["pwd"]])) { $0.requiredAMRValues = [Schibsted.MFAMethod.otp.amrValue] }
        try reject(.invalidClaim, standardClaims()) { $0.requiredAMRValues = ["otp"] }
        try reject(.invalidClaim, standardClaims(["amr": "otp"]))
    }

    @Test("Schibsted's legacy_user_id is exposed when present")
    func legacyUserID() throws {
        let token = try key.sign(claims: standardClaims(["legacy_user_id": "12345"]))
        #expect(try verifier().verify(token, keys: keys, now: testNow).claims.legacyUserID == "12345")
        let numeric = try key.sign(claims: standardClaims(["legacy_user_id": 12345]))
        #expect(try verifier().verify(numeric, keys: keys, now: testNow).claims.legacyUserID == "12345")
        // Out of Int64's range: not an id, and no crash.
        let huge = try key.sign(headerJSON: #"{"alg":"ES256","kid":"k1"}"#, payloadJSON: try TestSigningKeyJSON.text(standardClaims()).dropLast() + #","legacy_user_id":1e300}"#)
        #expect(try verifier().verify(huge, keys: keys, now: testNow).claims.legacyUserID == nil)
    }

    @Test("claims keep their raw JSON and every member, unknown ones included")
    func rawClaims() throws {
        let token = try key.sign(claims: standardClaims(["custom": ["a": [1, 2]], "email": "j@example.com"]))
        let claims = try verifier().verify(token, keys: keys, now: testNow).claims
        #expect(claims.raw["custom"] == .object(["a": .array([.number(1), .number(2)])]))
        #expect(claims.raw["email"] == .string("j@example.com"))
        #expect(claims.rawJSON.contains(#""custom":{"a":[1,2]}"#))
    }
}
