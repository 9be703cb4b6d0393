import Foundation
import OIDC
import OIDCTesting
import Testing

let testNow = Date(timeIntervalSince1970: 1_800_000_000)
let testIssuer = "https://idp.example"

func standardClaims(_ overrides: [String: Any?] = [:]) -> [String: Any] {
    var claims: [String: Any] = [
        "iss": testIssuer, "sub": "user-1", "aud": "client-1", "exp": 1_800_000_600, "iat": 1_799_999_990,
        "nonce": "nonce-1", "auth_time": 1_799_999_900,
    ]
    for (name, value) in overrides { claims[name] = value }
    return claims
}

func verifier(_ configure: (inout IDTokenVerifier) -> Void = { _ in }) -> IDTokenVerifier {
    var verifier = IDTokenVerifier(issuer: testIssuer, clientID: "client-1", nonce: .expected("nonce-1"))
    configure(&verifier)
    return verifier
}

func expectRejection(
    _ code: OIDCError.Code, _ token: String, keys: JWKSet, verifier: IDTokenVerifier = verifier(), now: Date = testNow,
    sourceLocation: SourceLocation = #_sourceLocation
) {
    let error = #expect(throws: OIDCError.self, sourceLocation: sourceLocation) { try verifier.verify(token, keys: keys, now: now) }
    #expect(error?.code == code, "\(error?.description ?? "no error")", sourceLocation: sourceLocation)
    #expect(error?.category == .security, sourceLocation: sourceLocation)
}

@Suite("ID-token verification")
struct IDTokenVerifierTests {
    static let asymmetric = JWSAlgorithm.allCases.filter { !$0.isHMACAlgorithm }

    @Test("each algorithm verifies with the right key and fails with another", arguments: asymmetric)
    func algorithms(algorithm: JWSAlgorithm) throws {
        let key = try TestSigningKey.generate(algorithm, keyID: "k1")
        let token = try key.sign(claims: standardClaims())
        let verified = try verifier().verify(token, keys: JWKSet(json: key.jwksJSON), now: testNow)
        #expect(verified.algorithm == algorithm)
        #expect(verified.keyID == "k1")
        #expect(verified.claims.subject == "user-1")
        #expect(verified.claims.audience == ["client-1"])
        #expect(verified.claims.expiresAt == Date(timeIntervalSince1970: 1_800_000_600))
        #expect(verified.claims.rawJSON.contains("\"sub\":\"user-1\""))
        #expect(!"\(verified)".contains(token), "the token is redacted")

        let impostor = try TestSigningKey.generate(algorithm, keyID: "k1")
        expectRejection(.invalidSignature, token, keys: try JWKSet(json: impostor.jwksJSON))
    }

    @Test("a token whose payload was altered after signing fails")
    func tampered() throws {
        let key = try TestSigningKey.generate(.rs256, keyID: "k1")
        let parts = try key.sign(claims: standardClaims()).split(separator: ".")
        let forged = Base64URL.encode(Array(try TestSigningKeyJSON.text(standardClaims(["sub": "admin"])).utf8))
        expectRejection(.invalidSignature, "\(parts[0]).\(forged).\(parts[2])", keys: try JWKSet(json: key.jwksJSON))
    }

    @Test("tokens minted by libjwt verify", arguments: [TokenMinter.Algorithm.rs256, .rs384, .rs512, .es256, .es384, .es512])
    func libjwtTokens(algorithm: TokenMinter.Algorithm) throws {
        let jwsAlgorithm = try #require(JWSAlgorithm(rawValue: algorithm.rawValue))
        let key = try TestSigningKey.generate(jwsAlgorithm, keyID: "lj")
        let claims = try TestSigningKeyJSON.text(standardClaims())
        let token = try TokenMinter(algorithm: algorithm, key: key.pem()).mint(claimsJSON: claims, headers: ["kid": "lj"])
        _ = try verifier().verify(token, keys: JWKSet(json: key.jwksJSON), now: testNow)
    }

    @Test("HS256 is refused unless the client's secret is configured and the algorithm allowed")
    func hmac() throws {
        let secret = "a-client-secret-that-is-32-bytes-long!"
        let token = try TokenMinter(algorithm: .hs256, key: secret).mint(claimsJSON: TestSigningKeyJSON.text(standardClaims()))
        let empty = try JWKSet(json: #"{"keys":[]}"#)
        expectRejection(.algorithmNotAllowed, token, keys: empty)
        expectRejection(.algorithmNotAllowed, token, keys: empty, verifier: verifier { $0.allowedAlgorithms.insert(.hs256) })
        expectRejection(.algorithmNotAllowed, token, keys: empty, verifier: verifier { $0.hmacSecret = Secret(secret) })
        let allowed = verifier {
            $0.allowedAlgorithms.insert(.hs256)
            $0.hmacSecret = Secret(secret)
        }
        _ = try allowed.verify(token, keys: empty, now: testNow)
        expectRejection(.invalidSignature, token, keys: empty, verifier: verifier {
            $0.allowedAlgorithms.insert(.hs256)
            $0.hmacSecret = Secret(secret + "x")
        })
    }

    @Test("algorithm confusion: HS256 keyed with the RSA public key (PEM, DER, JWK) is refused")
    func algorithmConfusion() throws {
        let group = try #require((try Vectors.json("wycheproof/rsa_signature_2048_sha256_test.json")["testGroups"] as? [[String: Any]])?.first)
        var jwk = try #require(group["keyJwk"] as? [String: Any])
        jwk["kid"] = "rsa"
        let jwkText = try TestSigningKeyJSON.text(jwk)
        let keys = try JWKSet(json: "{\"keys\":[\(jwkText)]}")
        let forms: [[UInt8]] = [
            Array(try #require(group["publicKeyPem"] as? String).utf8), hexBytes(try #require(group["publicKeyDer"] as? String)),
            Array(jwkText.utf8),
        ]
        for keyBytes in forms {
            let input = Base64URL.encode(Array(#"{"alg":"HS256","kid":"rsa","typ":"JWT"}"#.utf8)) + "."
                + Base64URL.encode(Array(try TestSigningKeyJSON.text(standardClaims()).utf8))
            let mac = try LibCrypto.hmac(digest: "SHA256", key: keyBytes, data: Array(input.utf8))
            let token = input + "." + Base64URL.encode(mac)
            expectRejection(.algorithmNotAllowed, token, keys: keys)
            // Even a client that allows HS256 with its own secret never uses the RSA key as an HMAC key.
            expectRejection(.invalidSignature, token, keys: keys, verifier: verifier {
                $0.allowedAlgorithms.insert(.hs256)
                $0.hmacSecret = Secret("the-real-client-secret-32-bytes-long")
            })
            let jwkKey = try #require(keys.keys.first)
            #expect(throws: OIDCError.self) { try JWS.verify(signature: mac, over: Array(input.utf8), with: jwkKey, algorithm: .hs256) }
        }
    }

    @Test("alg none is refused in any casing, signed or not", arguments: ["none", "None", "NONE", "nOnE"])
    func none(alg: String) throws {
        let key = try TestSigningKey.generate(.rs256, keyID: "k1")
        let keys = try JWKSet(json: key.jwksJSON)
        let payload = Base64URL.encode(Array(try TestSigningKeyJSON.text(standardClaims()).utf8))
        let header = Base64URL.encode(Array("{\"alg\":\"\(alg)\"}".utf8))
        expectRejection(.algorithmNotAllowed, "\(header).\(payload).", keys: keys)
        expectRejection(.algorithmNotAllowed, "\(header).\(payload).c2ln", keys: keys)
    }

    @Test("key selection by kid: missing with one key, missing with several, unknown, duplicated")
    func keySelection() throws {
        let a = try TestSigningKey.generate(.es256, keyID: "a")
        let b = try TestSigningKey.generate(.es256, keyID: "b")
        let noKid = try TestSigningKey.generate(.es256)
        let set = { (keys: [[String: Any]]) throws -> JWKSet in try JWKSet(json: TestSigningKeyJSON.text(["keys": keys])) }
        let tokenWithoutKid = try noKid.sign(claims: standardClaims())
        _ = try verifier().verify(tokenWithoutKid, keys: set([noKid.publicJWK()]), now: testNow)
        expectRejection(.ambiguousKey, tokenWithoutKid, keys: try set([noKid.publicJWK(), a.publicJWK()]))
        expectRejection(.keyNotFound, tokenWithoutKid, keys: try set([noKid.publicJWK()]), verifier: verifier { $0.requiresKeyID = true })
        expectRejection(.keyNotFound, try a.sign(claims: standardClaims()), keys: try set([b.publicJWK()]))
        expectRejection(.ambiguousKey, try a.sign(claims: standardClaims()), keys: try set([a.publicJWK(), b.publicJWK(extra: ["kid": "a"])]))
        _ = try verifier().verify(a.sign(claims: standardClaims()), keys: set([b.publicJWK(), a.publicJWK()]), now: testNow)
    }

    @Test("keys whose use, key_ops, alg or type exclude verification are never chosen")
    func keyFiltering() throws {
        let key = try TestSigningKey.generate(.rs256, keyID: "k")
        let token = try key.sign(claims: standardClaims())
        for extra: [String: Any] in [["use": "enc"], ["key_ops": ["encrypt"]], ["alg": "RS512"], ["alg": "PS256"]] {
            expectRejection(.keyNotFound, token, keys: try JWKSet(json: TestSigningKeyJSON.text(["keys": [key.publicJWK(extra: extra)]])))
        }
        _ = try verifier().verify(token, keys: JWKSet(json: TestSigningKeyJSON.text(["keys": [key.publicJWK(extra: ["key_ops": ["verify"]], includeAlgorithm: false)]])), now: testNow)
    }

    @Test("one odd key does not spoil the set")
    func mixedSet() throws {
        let key = try TestSigningKey.generate(.ps256, keyID: "good")
        let json = """
            {"keys":[{"kty":"EC","crv":"P-256","kid":"bad","x":"AAAA","y":"AAAA"},{"kty":"RSA","kid":"small","n":"AQAB","e":"AQAB"},
            {"kty":"OKP","crv":"X25519","kid":"x","x":"AAAA"},{"kty":"unknown"},5,\(try TestSigningKeyJSON.text(key.publicJWK()))]}
            """
        let keys = try JWKSet(json: json)
        #expect(keys.keys.count == 1)
        #expect(keys.skipped.count == 5)
        _ = try verifier().verify(key.sign(claims: standardClaims()), keys: keys, now: testNow)
    }

    @Test("a token typed as another kind of JWT is refused (RFC 8725 §3.11); no typ, JWT and JOSE are accepted", arguments: [
        ("at+jwt", false), ("application/at+jwt", false), ("logout+jwt", false), ("secevent+jwt", false), ("dpop+jwt", false),
        ("JWT", true), ("jwt", true), ("application/jwt", true), ("JOSE", true),
    ])
    func typedTokens(type: String, accepted: Bool) throws {
        let key = try TestSigningKey.generate(.es256, keyID: "k1")
        let keys = try JWKSet(json: key.jwksJSON)
        let token = try key.sign(claims: standardClaims(), extraHeader: ["typ": type])
        if accepted {
            _ = try verifier().verify(token, keys: keys, now: testNow)
        } else {
            expectRejection(.malformedToken, token, keys: keys)
        }
    }

    @Test("an untyped logout token (events, sid, no nonce) with every ID-token claim is refused as an ID token when no nonce is expected (RFC 8417 §4.3)")
    func logoutTokenIsNoIDToken() throws {
        let key = try TestSigningKey.generate(.es256, keyID: "k1")
        let keys = try JWKSet(json: key.jwksJSON)
        let logout = standardClaims([
            "nonce": nil, "auth_time": nil, "sid": "session-1", "jti": "j-1",
            "events": ["http://schemas.openid.net/event/backchannel-logout": [String: Any]()],
        ])
        let token = try key.sign(claims: logout)
        expectRejection(.invalidClaim, token, keys: keys, verifier: verifier { $0.nonce = .notChecked })
        expectRejection(.invalidClaim, token, keys: keys, verifier: verifier { $0.nonce = .absent })
        _ = try verifier { $0.nonce = .notChecked }.verify(key.sign(claims: standardClaims(["nonce": nil, "sid": "session-1"])), keys: keys, now: testNow)
    }

    @Test("crit, padding, whitespace, extra segments and duplicate members are malformed")
    func malformed() throws {
        let key = try TestSigningKey.generate(.es256, keyID: "k1")
        let keys = try JWKSet(json: key.jwksJSON)
        let claims = try TestSigningKeyJSON.text(standardClaims())
        expectRejection(.malformedToken, try key.sign(claims: standardClaims(), extraHeader: ["crit": ["exp"], "exp": 1]), keys: keys)
        expectRejection(.malformedToken, try key.sign(claims: standardClaims(), extraHeader: ["crit": []]), keys: keys)
        expectRejection(.malformedToken, try key.sign(headerJSON: #"{"alg":"ES256","kid":"k1","alg":"ES256"}"#, payloadJSON: claims), keys: keys)
        expectRejection(.malformedToken, try key.sign(headerJSON: #"{"alg":"ES256","kid":"k1"}"#, payloadJSON: #"{"sub":"a","sub":"b"}"#), keys: keys)
        expectRejection(.malformedToken, try key.sign(headerJSON: #"["ES256"]"#, payloadJSON: claims), keys: keys)
        let token = try key.sign(claims: standardClaims())
        let parts = token.split(separator: ".").map(String.init)
        for variant in [
            token + "=", parts[0] + "=." + parts[1] + "." + parts[2], " " + token, token + "\n", parts[0] + ". " + parts[1] + "." + parts[2],
            token + ".x", parts[0] + "." + parts[1], parts[0] + "+." + parts[1] + "." + parts[2], "", "..", token.replacingOccurrences(of: "-", with: "+"),
        ] where variant != token {
            expectRejection(.malformedToken, variant, keys: keys)
        }
    }

    @Test("a 1 MiB token and deeply nested claims are refused quickly")
    func hostileSizes() throws {
        let key = try TestSigningKey.generate(.es256, keyID: "k1")
        let keys = try JWKSet(json: key.jwksJSON)
        let big = try key.sign(claims: standardClaims(["pad": String(repeating: "x", count: 1 << 20)]))
        expectRejection(.malformedToken, big, keys: keys)
        let nested = String(repeating: "[", count: 10_000) + String(repeating: "]", count: 10_000)
        let deep = try key.sign(headerJSON: #"{"alg":"ES256","kid":"k1"}"#, payloadJSON: #"{"iss":"x","deep":\#(nested)}"#)
        expectRejection(.malformedToken, deep, keys: keys, verifier: verifier { $0.maximumTokenLength = 1 << 20 })
        expectRejection(.malformedToken, try key.sign(headerJSON: #"{"alg":"ES256","kid":"k1"}"#, payloadJSON: #"{"exp":1e400}"#), keys: keys)
    }
}

/// JSON text for test fixtures (sorted keys, no escaped slashes).
enum TestSigningKeyJSON {
    static func text(_ object: Any) throws -> String {
        String(decoding: try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]), as: UTF8.self)
    }
}
