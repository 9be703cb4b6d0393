import Foundation
@testable import OIDC
import Testing

/// DPoP proofs (RFC 9449 §4.2) as `DPoPKey` makes them, the nonce cache, and the challenges the
/// decorator answers; no network.
@Suite("DPoP keys, proofs, nonces and challenges")
struct DPoPKeyTests {
    static let api = URL(string: "https://user:pw@api.example:8443/v1/items?page=2&q=x#frag")!
    static let now = Date(timeIntervalSince1970: 1_800_000_000.75)

    static func parts(_ proof: String) throws -> (header: [String: JSONValue], claims: [String: JSONValue]) {
        let jwt = try UnverifiedJWT(proof)
        return (jwt.header, jwt.claims)
    }

    @Test("the header: typ dpop+jwt, the key's alg, and the public jwk without d, kid, use or alg; the thumbprint is the signing key's", arguments: [JWSAlgorithm.es256, .ps256, .edDSA])
    func header(_ algorithm: JWSAlgorithm) throws {
        let signing = try JWSSigningKey.generate(algorithm, keyID: "kid-1")
        let key = try DPoPKey(signing)
        #expect(key.algorithm == algorithm)
        #expect(key.thumbprint == (try signing.thumbprint()))
        let header = try Self.parts(try key.proof(method: "GET", url: Self.api)).header
        #expect(Set(header.keys) == ["typ", "alg", "jwk"])
        #expect(header["typ"]?.stringValue == "dpop+jwt")
        #expect(header["alg"]?.stringValue == algorithm.rawValue)
        let jwk = try #require(header["jwk"]?.objectValue)
        for member in ["d", "p", "q", "dp", "dq", "qi", "kid", "use", "alg"] {
            #expect(jwk[member] == nil, "\(member) in the proof's jwk")
        }
        var expected = signing.publicJWK
        for member in ["kid", "use", "alg"] { expected[member] = nil }
        #expect(jwk == expected)
    }

    @Test("the claims: a fresh 128-bit jti, htm, htu without query, fragment or user info, iat in whole seconds, ath = base64url(sha256(token)), nonce")
    func claims() throws {
        let key = try DPoPKey.generate()
        let token = Secret("an-access-token")
        let first = try Self.parts(try key.proof(method: "POST", url: Self.api, accessToken: token, nonce: "n-1!~", now: Self.now)).claims
        #expect(Set(first.keys) == ["jti", "htm", "htu", "iat", "ath", "nonce"])
        #expect(first["htm"]?.stringValue == "POST")
        #expect(first["htu"]?.stringValue == "https://api.example:8443/v1/items")
        #expect(first["iat"]?.numberValue == 1_800_000_000)
        #expect(first["nonce"]?.stringValue == "n-1!~")
        #expect(first["ath"]?.stringValue == Base64URL.encode(try LibCrypto.sha256(Array("an-access-token".utf8))))
        // RFC 9449 §A.2-style check of ath against an independently known value: SHA-256("abc").
        let abc = try Self.parts(try key.proof(method: "GET", url: Self.api, accessToken: Secret("abc"))).claims
        #expect(abc["ath"]?.stringValue == "ungWv48Bz-pBQUDeXa4iI7ADYaOWF3qctBD_YfIAFa0")
        let jti = try #require(first["jti"]?.stringValue)
        #expect(Base64URL.decode(jti)?.count == 16)

        let bare = try Self.parts(try key.proof(method: "GET", url: try #require(URL(string: "http://127.0.0.1:8080/a/b")))).claims
        #expect(Set(bare.keys) == ["jti", "htm", "htu", "iat"])
        #expect(bare["htu"]?.stringValue == "http://127.0.0.1:8080/a/b")
        let ids = try (0..<20).map { _ in try Self.parts(try key.proof(method: "GET", url: Self.api)).claims["jti"]?.stringValue }
        #expect(Set(ids.compactMap { $0 }).count == 20)
    }

    @Test("the signature verifies with the header's own jwk, for every algorithm; a changed claim does not", arguments: [JWSAlgorithm.es256, .es384, .ps256, .rs256, .edDSA])
    func signatureVerifies(_ algorithm: JWSAlgorithm) throws {
        let key = try DPoPKey.generate(algorithm)
        let proof = try key.proof(method: "GET", url: Self.api, accessToken: Secret("t"))
        let jws = try ParsedJWS(proof)
        #expect(jws.algorithm == algorithm && jws.type == "dpop+jwt")
        let jwk = try JWK(members: try #require(jws.header["jwk"]?.objectValue))
        try jws.verifySignature(with: jwk)

        var parts = proof.split(separator: ".").map(String.init)
        var claims = try Self.parts(proof).claims
        claims["htm"] = .string("POST")
        parts[1] = Base64URL.encode(Array(JSONValue.object(claims).jsonText.utf8))
        let forged = try ParsedJWS(parts.joined(separator: "."))
        #expect(throws: OIDCError.self) { try forged.verifySignature(with: jwk) }
        // Another key's jwk does not verify it either.
        let other = try JWK(members: try #require(try Self.parts(try DPoPKey.generate(algorithm).proof(method: "GET", url: Self.api)).header["jwk"]?.objectValue))
        #expect(throws: OIDCError.self) { try jws.verifySignature(with: other) }
    }

    @Test("a nonce outside RFC 9449's characters is refused; a URL without scheme or host too", arguments: ["", "with space", "quote\"d", "back\\slash", "caf\u{E9}", "tab\t", String(repeating: "n", count: 513)])
    func invalidNonce(_ nonce: String) throws {
        let key = try DPoPKey.generate()
        let error = #expect(throws: OIDCError.self) { try key.proof(method: "GET", url: Self.api, nonce: nonce) }
        #expect(error?.code == .invalidArgument)
        #expect(!DPoPNonces.isValid(nonce))
    }

    @Test("relative URLs are refused; printable nonces up to 512 characters are taken")
    func urlsAndGoodNonces() throws {
        let key = try DPoPKey.generate()
        let relative = #expect(throws: OIDCError.self) { try key.proof(method: "GET", url: URL(string: "/v1/items")!) }
        #expect(relative?.code == .invalidArgument)
        for nonce in ["a", "!#$%&'()*+,-./0-9:;<=>?@A-Z[]^_`a-z{|}~", String(repeating: "n", count: 512)] {
            #expect(try Self.parts(try key.proof(method: "GET", url: Self.api, nonce: nonce)).claims["nonce"]?.stringValue == nonce)
        }
    }

    @Test("htu is the URL's scheme, authority (without user information) and path, as written: no query, no fragment")
    func htuEdgeCases() throws {
        let cases: [(String, String)] = [
            ("https://api.example", "https://api.example"),
            ("https://api.example/", "https://api.example/"),
            ("https://api.example?x=1", "https://api.example"),
            ("https://api.example#top", "https://api.example"),
            ("https://api.example/a%2Fb/c;p=1?x=/y#f?g", "https://api.example/a%2Fb/c;p=1"),
            ("https://u@api.example:443/x", "https://api.example:443/x"),
            ("https://u:p%40ss@api.example/x?y", "https://api.example/x"),
            ("http://[::1]:8080/v1?x", "http://[::1]:8080/v1"),
            ("HTTPS://API.Example/Path", "HTTPS://API.Example/Path"),
            ("https://api.example/a@b/c", "https://api.example/a@b/c"),
            ("https://api.example/?", "https://api.example/"),
        ]
        let key = try DPoPKey.generate()
        for (text, expected) in cases {
            let url = try #require(URL(string: text), "\(text)")
            #expect(try DPoPKey.target(of: url) == expected, "\(text)")
            #expect(try Self.parts(try key.proof(method: "GET", url: url)).claims["htu"]?.stringValue == expected)
        }
        for text in ["mailto:someone@example.com", "urn:ietf:x", "https:///path", "https://user@/path", "1https://a.example/"] {
            guard let url = URL(string: text) else { continue }
            let error = #expect(throws: OIDCError.self, "\(text)") { try DPoPKey.target(of: url) }
            #expect(error?.code == .invalidArgument)
        }
    }

    @Test("claims are JSON-escaped: a method or URL path with quotes, backslashes or controls still makes a proof whose claims read back as given")
    func claimsEscaped() throws {
        let key = try DPoPKey.generate()
        let method = "M\"\\\u{01}\n\té"
        let claims = try Self.parts(try key.proof(method: method, url: Self.api)).claims
        #expect(claims["htm"]?.stringValue == method)
        let far = try Self.parts(try key.proof(method: "GET", url: Self.api, now: Date(timeIntervalSince1970: 4_102_444_800.9))).claims
        #expect(far["iat"]?.numberValue == 4_102_444_800)
        let error = #expect(throws: OIDCError.self) { try key.proof(method: "GET", url: Self.api, now: Date(timeIntervalSince1970: .infinity)) }
        #expect(error?.code == .invalidArgument)
    }

    @Test("an HMAC key is refused: a proof needs a public key")
    func hmacRefused() throws {
        // No JWSSigningKey signs with a shared secret, so an HMAC key never reaches a proof: asked
        // for one, generate and the PEM initializer refuse.
        for algorithm in [JWSAlgorithm.hs256, .hs384, .hs512] {
            let generated = #expect(throws: OIDCError.self) { try DPoPKey.generate(algorithm) }
            #expect(generated?.code == .invalidKey, "\(algorithm)")
            let pem = try DPoPKey.generate().privateKeyPEM()
            let read = #expect(throws: OIDCError.self) { try DPoPKey(pem: pem, algorithm: algorithm) }
            #expect(read?.code == .invalidKey, "\(algorithm)")
        }
    }

    @Test("a key prints its algorithm and thumbprint, never key material; equal keys are the same public key and algorithm; PEM round trip")
    func descriptionAndEquality() throws {
        let key = try DPoPKey.generate()
        #expect(key.description == "DPoPKey(ES256, jkt: \(key.thumbprint))")
        let pem = try key.privateKeyPEM()
        #expect(pem.contains("PRIVATE KEY"))
        #expect(!"\(key)".contains("PRIVATE") && !String(reflecting: key).contains(pem))
        let again = try DPoPKey(pem: pem)
        #expect(again == key)
        #expect(try DPoPKey.generate() != key)
    }

    // MARK: - Nonces and challenges

    static func response(_ status: Int, _ headers: [(String, String)] = [], body: String = "") -> HTTPResponse {
        HTTPResponse(status: status, headers: HTTPHeaders(headers), body: Array(body.utf8))
    }

    @Test("nonces are kept per origin, from every response, valid ones only")
    func noncesPerOrigin() throws {
        let nonces = DPoPNonces()
        let a = try #require(URL(string: "https://as.example/token"))
        let aOther = try #require(URL(string: "https://as.example:443/userinfo?x=1"))
        let b = try #require(URL(string: "https://as.example:8443/token"))
        #expect(nonces.nonce(for: a) == nil)
        #expect(nonces.record(Self.response(200, [("DPoP-Nonce", "n1")]), from: a))
        #expect(nonces.nonce(for: aOther) == "n1")
        #expect(nonces.nonce(for: b) == nil)
        #expect(!nonces.record(Self.response(200, [("DPoP-Nonce", "n1")]), from: a), "the same nonce is no change")
        #expect(!nonces.record(Self.response(200, [("DPoP-Nonce", "bad nonce")]), from: a))
        #expect(nonces.nonce(for: a) == "n1")
        #expect(nonces.record(Self.response(401, [("DPoP-Nonce", "n2")]), from: aOther))
        #expect(nonces.nonce(for: a) == "n2")
    }

    @Test("WWW-Authenticate parsing: schemes and parameters, quoted or not, several challenges in one field")
    func challengeParsing() {
        let one = AuthenticationChallenge.parse(#"DPoP error="use_dpop_nonce", error_description="Resource server requires nonce in DPoP proof""#)
        #expect(one.count == 1)
        #expect(one.first?.scheme == "DPoP")
        #expect(one.first?.parameters["error"] == "use_dpop_nonce")
        #expect(one.first?.parameters["error_description"] == "Resource server requires nonce in DPoP proof")
        let two = AuthenticationChallenge.parse(#"Bearer realm="api", DPoP algs="ES256 PS256", ERROR=use_dpop_nonce"#)
        #expect(two.map(\.scheme) == ["Bearer", "DPoP"])
        #expect(two.last?.parameters["algs"] == "ES256 PS256" && two.last?.parameters["error"] == "use_dpop_nonce")
        #expect(AuthenticationChallenge.parse("").isEmpty)
    }

    @Test("a nonce challenge is a 400 use_dpop_nonce body or a 401 DPoP use_dpop_nonce challenge, with a nonce; nothing else is")
    func nonceChallenges() throws {
        let url = try #require(URL(string: "https://rs.example/api"))
        let dpop = DPoP(key: try DPoPKey.generate())
        let nonce = ("DPoP-Nonce", "fresh")
        #expect(DPoP.isNonceChallenge(Self.response(400, body: #"{"error":"use_dpop_nonce"}"#)))
        #expect(DPoP.isNonceChallenge(Self.response(401, [("WWW-Authenticate", #"DPoP error="use_dpop_nonce""#)])))
        #expect(DPoP.isNonceChallenge(Self.response(401, [("WWW-Authenticate", #"Bearer realm="x", dpop error="use_dpop_nonce""#)])))
        #expect(!DPoP.isNonceChallenge(Self.response(401, [("WWW-Authenticate", #"Bearer error="use_dpop_nonce""#)])))
        #expect(!DPoP.isNonceChallenge(Self.response(401, [("WWW-Authenticate", #"DPoP error="invalid_dpop_proof""#)])))
        #expect(!DPoP.isNonceChallenge(Self.response(400, body: #"{"error":"invalid_dpop_proof"}"#)))
        #expect(!DPoP.isNonceChallenge(Self.response(403, [("WWW-Authenticate", #"DPoP error="use_dpop_nonce""#)])))
        #expect(!DPoP.isNonceChallenge(Self.response(200, body: #"{"error":"use_dpop_nonce"}"#)))

        // A challenge without any nonce to retry with is no reason to retry.
        #expect(!dpop.nonceChallenged(Self.response(400, body: #"{"error":"use_dpop_nonce"}"#), to: url))
        #expect(dpop.nonceChallenged(Self.response(400, [nonce], body: #"{"error":"use_dpop_nonce"}"#), to: url))
        #expect(dpop.nonces.nonce(for: url) == "fresh")
        let signed = try dpop.signing(HTTPRequest(url: url), accessToken: Secret("tok"))
        let claims = try Self.parts(try #require(signed.headers["DPoP"])).claims
        #expect(claims["nonce"]?.stringValue == "fresh" && claims["ath"] != nil && claims["htm"]?.stringValue == "GET")
    }
}
