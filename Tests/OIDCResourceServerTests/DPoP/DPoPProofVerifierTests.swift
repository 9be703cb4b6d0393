import Foundation
import OIDC
import OIDCResourceServer
import OIDCTesting
import Testing

@Suite("DPoP proofs alone (RFC 9449 §4.3)")
struct DPoPProofVerifierTests {
    static let url = "https://api.example/orders/42"
    static let now = Date(timeIntervalSince1970: 1_800_000_000)

    /// A proof signed by `key` with this header and these claims, exactly.
    static func proof(_ key: TestSigningKey, header: [String: Any]? = nil, claims: [String: Any] = [:], drop: [String] = []) throws -> String {
        var members: [String: Any] = ["typ": "dpop+jwt", "alg": key.algorithm.rawValue, "jwk": try key.publicJWK(includeAlgorithm: false).filter { $0.key != "kid" && $0.key != "use" }]
        if let header { members.merge(header) { _, new in new } }
        var body: [String: Any] = ["jti": UUID().uuidString, "htm": "GET", "htu": url, "iat": Int(now.timeIntervalSince1970)]
        body.merge(claims) { _, new in new }
        for name in drop { body[name] = nil }
        return try key.sign(headerJSON: try Self.json(members), payloadJSON: try Self.json(body))
    }

    static func json(_ object: [String: Any]) throws -> String {
        String(decoding: try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]), as: UTF8.self)
    }

    static func refused(_ proof: String, url: String = url, accessToken: String? = nil) -> DPoPProofError? {
        do {
            _ = try DPoPProofVerifier().verify(proof, method: "GET", url: url, accessToken: accessToken, now: now)
            return nil
        } catch {
            return error
        }
    }

    @Test("a well-formed proof passes, and says its key's thumbprint, jti, iat and replay identifier")
    func accepted() throws {
        let key = try TestSigningKey.generate(.es256)
        let dpopKey = try DPoPKey(pem: try key.pem())
        let proof = try DPoPProofVerifier().verify(try Self.proof(key, claims: ["jti": "one"]), method: "GET", url: Self.url, now: Self.now)
        #expect(proof.thumbprint == dpopKey.thumbprint && proof.identifier == "one" && proof.issuedAt == Self.now)
        #expect(proof.replayIdentifier == "dpop:\(dpopKey.thumbprint):one" && proof.rememberUntil > Self.now)
    }

    @Test("the header: typ, alg, jwk rules", arguments: ["typ JWT", "typ dpop+jwt+x", "alg HS256", "oct jwk", "jwk string", "use enc", "crit", "kid number"])
    func headerRules(_ rule: String) throws {
        let key = try TestSigningKey.generate(.es256)
        let header: [String: Any] = switch rule {
        case "typ JWT": ["typ": "JWT"]
        case "typ dpop+jwt+x": ["typ": "dpop+jwt+x"]
        case "alg HS256": ["alg": "HS256"]
        case "oct jwk": ["jwk": ["kty": "oct", "k": "c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0"]]
        case "jwk string": ["jwk": "not-an-object"]
        case "use enc": ["jwk": try key.publicJWK(extra: ["use": "enc"], includeAlgorithm: false)]
        case "crit": ["crit": ["exp"]]
        default: ["kid": 7]
        }
        #expect(Self.refused(try Self.proof(key, header: header)) != nil)
    }

    @Test("the jwk: private members, key_ops without verify, another alg, another key's signature")
    func jwkRules() throws {
        let key = try TestSigningKey.generate(.es256)
        let other = try TestSigningKey.generate(.es256)
        var jwk = try key.publicJWK(includeAlgorithm: false)
        jwk["kid"] = nil
        jwk["use"] = nil
        for change: [String: Any] in [["d": "AAAA"], ["key_ops": ["sign"]], ["alg": "ES384"]] {
            let header: [String: Any] = ["jwk": jwk.merging(change) { _, new in new }]
            #expect(Self.refused(try Self.proof(key, header: header))?.rule == .invalidProof)
        }
        var foreign = try other.publicJWK(includeAlgorithm: false)
        foreign["kid"] = nil
        #expect(Self.refused(try Self.proof(key, header: ["jwk": foreign]))?.message.contains("signature") == true)
    }

    @Test("the claims: jti, htm, htu and iat required with their types; ath the token's hash")
    func claimRules() throws {
        let key = try TestSigningKey.generate(.es256)
        for name in ["jti", "htm", "htu", "iat"] { #expect(Self.refused(try Self.proof(key, drop: [name])) != nil, "\(name)") }
        for change: [String: Any] in [["jti": ""], ["jti": String(repeating: "j", count: 257)], ["iat": "now"], ["htm": 1], ["nonce": 5]] {
            #expect(Self.refused(try Self.proof(key, claims: change)) != nil, "\(change)")
        }
        let token = "the-access-token"
        let hash = Base64URLEncoding.encode(try LibCrypto.sha256(Array(token.utf8)))
        #expect(Self.refused(try Self.proof(key, claims: ["ath": hash]), accessToken: token) == nil)
        #expect(Self.refused(try Self.proof(key, claims: ["ath": hash]), accessToken: token + "x")?.rule == .accessTokenHashMismatch)
        #expect(Self.refused(try Self.proof(key), accessToken: token)?.rule == .accessTokenHashMismatch)
    }

    @Test("htu normalization: case, default port, percent-encoding, dot segments, query and fragment", arguments: [
        ("https://API.Example:443/orders/42", true), ("HTTPS://api.example/orders/42?x=1#y", true), ("https://api.example/%6frders/42", true),
        ("https://api.example/orders/x/../42", true), ("https://api.example/orders/./42", true),
        ("https://api.example/Orders/42", false), ("https://api.example:8443/orders/42", false), ("http://api.example/orders/42", false),
        ("https://user@api.example/orders/42", false), ("https://api.example/orders/4%32", true), ("https://api.example/orders/42/", false),
        ("https://api.example/orders/%zz", false), ("https://api.еxample/orders/42", false), ("ftp://api.example/orders/42", false),
        ("api.example/orders/42", false), ("https://api.example:99999/orders/42", false), ("https:///orders/42", false),
    ])
    func targetURI(_ htu: String, _ accepted: Bool) throws {
        let key = try TestSigningKey.generate(.es256)
        #expect((Self.refused(try Self.proof(key, claims: ["htu": htu])) == nil) == accepted)
    }

    @Test("the request's own URL is normalized too; %2F and / are different paths")
    func requestURL() throws {
        let key = try TestSigningKey.generate(.es256)
        #expect(Self.refused(try Self.proof(key), url: "HTTPS://api.example:443/orders/42?page=1") == nil)
        #expect(Self.refused(try Self.proof(key, claims: ["htu": "https://api.example/orders%2F42"])) != nil)
    }

    @Test("huge, truncated or garbage proofs are refused without a crash", arguments: [
        "", ".", "..", "a.b.c", String(repeating: "A", count: 100_000), "e30.e30.e30", "eyJ0eXAiOiJkcG9wK2p3dCJ9..", "\u{0}\u{0}.\u{0}.\u{0}",
    ])
    func garbage(_ proof: String) {
        #expect(Self.refused(proof) != nil)
    }

    @Test("iat: the window is the maximum age plus the leeway, and the leeway ahead")
    func window() throws {
        let key = try TestSigningKey.generate(.es256)
        let verifier = DPoPProofVerifier(maximumAge: 60, leeway: 5)
        let at = { (offset: Int) throws -> Bool in
            let proof = try Self.proof(key, claims: ["iat": Int(Self.now.timeIntervalSince1970) + offset])
            return (try? verifier.verify(proof, method: "GET", url: Self.url, now: Self.now)) != nil
        }
        #expect(try at(-65) && !(try at(-66)) && (try at(5)) && !(try at(6)))
    }
}
