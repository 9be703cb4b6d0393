internal import Foundation
internal import OIDC

/// A DPoP proof checked as RFC 9449 §4.3 asks: one `DPoP` header holding a compact JWS with `typ`
/// `dpop+jwt`, an accepted asymmetric `alg` and a public `jwk` that verifies it; claims `jti`,
/// `htm` (the method), `htu` (this endpoint's URL, compared after normalization, without query and
/// fragment), `iat` within the window, `nonce` when required, and at a resource `ath` (the access
/// token's hash) and a key that is the one the token is bound to. A `jti` seen before is a replay.
/// Every proof checked is recorded with its outcome.
enum DPoPProofCheck {
    /// What an accepted proof tells the endpoint.
    struct Accepted: Sendable {
        /// RFC 7638 thumbprint of the proof's key: the `jkt` to bind to, or to compare with.
        var thumbprint: String
        /// A new nonce to announce in `DPoP-Nonce`, when this proof's use rotated it.
        var nextNonce: String?

        var headers: [(name: String, value: String)] { nextNonce.map { [("DPoP-Nonce", $0)] } ?? [] }
    }

    static let type = "dpop+jwt"

    /// Members that only a private or symmetric key has (RFC 7518 §6).
    private static let privateMembers: Set<String> = ["d", "p", "q", "dp", "dq", "qi", "oth", "k"]

    /// The proof of `request`, checked for `endpoint`; `nil` when the request carries no `DPoP` header.
    ///
    /// - Parameters:
    ///   - accessToken: the token sent with the proof to a resource: `ath` must be its hash.
    ///   - boundKey: the `jkt` the presented token is bound to: the proof's key must be that one.
    static func check(
        _ request: ProviderRequest, endpoint: TestProvider.Endpoint, accessToken: String? = nil, boundKey: String? = nil,
        _ context: ProviderContext
    ) async throws(DPoPRefusal) -> Accepted? {
        let values = request.headerValues("DPoP")
        guard let compact = values.first else { return nil }
        var thumbprint: String?
        let now = await context.state.now
        do throws(DPoPRefusal) {
            guard values.count == 1 else { throw DPoPRefusal.invalidProof("A request carries at most one DPoP header.") }
            let proof = try verify(compact, request: request, now: now, context)
            thumbprint = proof.thumbprint
            if let accessToken {
                let hash = try? Base64URLEncoding.encode(LibCrypto.sha256(Array(accessToken.utf8)))
                guard let ath = proof.claims["ath"]?.stringValue, let hash, ConstantTime.equals(ath, hash) else {
                    throw DPoPRefusal.invalidProof("The DPoP proof's ath is not the hash of the access token sent with it.")
                }
            }
            if let boundKey, !ConstantTime.equals(boundKey, proof.thumbprint) {
                throw DPoPRefusal.invalidProof("The DPoP proof is signed by another key than the one the token is bound to.")
            }
            let policy = context.configuration.dpop
            let expiry = Date(timeIntervalSince1970: proof.issuedAt + Double(policy.maximumProofAge + policy.clockLeeway))
            let nextNonce = try await context.state.acceptDPoPProof(
                id: proof.jti, rememberedUntil: expiry, nonce: proof.claims["nonce"]?.stringValue,
                nonceRequired: policy.nonces.requiredAt.contains(endpoint)
            )
            await record(compact, thumbprint: thumbprint, error: nil, endpoint, context)
            return Accepted(thumbprint: proof.thumbprint, nextNonce: nextNonce)
        } catch {
            await record(compact, thumbprint: thumbprint, error: error.code, endpoint, context)
            throw error
        }
    }

    /// A proof whose signature and claims passed, before its nonce and `jti` are looked at.
    private struct Verified {
        var thumbprint: String
        var claims: [String: JSONValue]
        var jti: String
        var issuedAt: Double
    }

    private static func verify(
        _ compact: String, request: ProviderRequest, now: Date, _ context: ProviderContext
    ) throws(DPoPRefusal) -> Verified {
        let policy = context.configuration.dpop
        let jws: ParsedJWS
        let claims: [String: JSONValue]
        do {
            jws = try ParsedJWS(compact, maximumLength: 16 * 1024)
            claims = try StrictJSONParser.parseObject(jws.payload)
        } catch {
            throw .invalidProof("The DPoP proof is not a compact JWS with a JSON claims set.")
        }
        guard jws.type == type else { throw .invalidProof("The DPoP proof's typ must be \(type).") }
        guard policy.algorithms.contains(jws.algorithm), !jws.algorithm.isHMAC else {
            throw .invalidProof("The DPoP proof's alg is not one this provider accepts.")
        }
        guard let members = jws.header["jwk"]?.objectValue else { throw .invalidProof("The DPoP proof's header has no jwk.") }
        guard privateMembers.isDisjoint(with: members.keys) else {
            throw .invalidProof("The DPoP proof's jwk holds private key material; only the public key belongs there.")
        }
        let thumbprint: String
        do throws(OIDCError) {
            let key = try JWK(object: members)
            guard key.canVerify(jws.algorithm) else { throw OIDCError(.algorithmNotAllowed, "key and alg differ") }
            try jws.verifySignature(with: key)
            thumbprint = try Self.thumbprint(members)
        } catch {
            throw .invalidProof("The DPoP proof's signature does not verify with its jwk (\(error.code)).")
        }
        guard let jti = claims["jti"]?.stringValue, !jti.isEmpty, jti.utf8.count <= 256 else {
            throw .invalidProof("The DPoP proof has no jti.")
        }
        guard claims["htm"]?.stringValue == request.method else {
            throw .invalidProof("The DPoP proof's htm is not this request's method, \(request.method).")
        }
        let origin = String(context.issuer.dropLast(context.configuration.issuerPath.count))
        guard let htu = claims["htu"]?.stringValue, let presented = normalizedURL(htu), presented == normalizedURL(origin + request.path) else {
            throw .invalidProof("The DPoP proof's htu is not this endpoint's URL.")
        }
        guard let issuedAt = claims["iat"]?.numberValue else { throw .invalidProof("The DPoP proof has no iat.") }
        return Verified(thumbprint: thumbprint, claims: claims, jti: jti, issuedAt: try checkTime(issuedAt, now: now, policy))
    }

    /// `iat` must lie within the window around the provider's clock: not older than the maximum age,
    /// not ahead of it, each give or take the leeway.
    private static func checkTime(_ issuedAt: Double, now: Date, _ policy: TestProvider.DPoP) throws(DPoPRefusal) -> Double {
        let now = now.timeIntervalSince1970
        guard issuedAt <= now + Double(policy.clockLeeway) else { throw .invalidProof("The DPoP proof's iat is in the future.") }
        guard issuedAt >= now - Double(policy.maximumProofAge + policy.clockLeeway) else {
            throw .invalidProof("The DPoP proof is too old: its iat is more than \(policy.maximumProofAge) seconds ago.")
        }
        return issuedAt
    }

    /// RFC 7638: SHA-256 of the required members, in lexicographic order, without whitespace.
    static func thumbprint(_ members: [String: JSONValue]) throws(OIDCError) -> String {
        let required: [String] = switch members["kty"]?.stringValue {
        case "RSA": ["e", "kty", "n"]
        case "EC": ["crv", "kty", "x", "y"]
        case "OKP": ["crv", "kty", "x"]
        default: throw OIDCError(.invalidKey, "no thumbprint for this key type")
        }
        var canonical: [String: JSONValue] = [:]
        for name in required { canonical[name] = members[name] }
        return Base64URLEncoding.encode(try LibCrypto.sha256(Array(JSONValue.object(canonical).jsonText.utf8)))
    }

    /// RFC 3986 §6.2.2 and §6.2.3 normalization of an absolute http(s) URL without its query and
    /// fragment: scheme and host lowercased, the default port dropped, an empty path made `/`,
    /// percent-encodings of unreserved characters decoded and the others' hex uppercased.
    static func normalizedURL(_ text: String) -> String? {
        guard let components = URLComponents(string: text), let scheme = components.scheme?.lowercased(),
            scheme == "http" || scheme == "https", let host = components.percentEncodedHost?.lowercased(), !host.isEmpty,
            components.percentEncodedUser == nil
        else { return nil }
        let port = components.port.flatMap { ($0 == 80 && scheme == "http") || ($0 == 443 && scheme == "https") ? nil : $0 }
        let path = normalizedPath(components.percentEncodedPath)
        return "\(scheme)://\(host)\(port.map { ":\($0)" } ?? "")\(path.isEmpty ? "/" : path)"
    }

    private static func normalizedPath(_ path: String) -> String {
        let unreserved = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~".utf8)
        var bytes = Array(path.utf8)[...]
        var output: [UInt8] = []
        while let byte = bytes.popFirst() {
            guard byte == UInt8(ascii: "%"), bytes.count >= 2,
                let value = UInt8(String(decoding: bytes.prefix(2), as: UTF8.self), radix: 16)
            else {
                output.append(byte)
                continue
            }
            bytes = bytes.dropFirst(2)
            if unreserved.contains(value) {
                output.append(value)
            } else {
                output += Array(String(format: "%%%02X", value).utf8)
            }
        }
        return String(decoding: output, as: UTF8.self)
    }

    private static func record(_ compact: String, thumbprint: String?, error: String?, _ endpoint: TestProvider.Endpoint, _ context: ProviderContext) async {
        var header: [String: JSONValue] = [:]
        var claims: [String: JSONValue] = [:]
        if let jws = try? ParsedJWS(compact, maximumLength: 16 * 1024) {
            header = jws.header
            claims = (try? StrictJSONParser.parseObject(jws.payload)) ?? [:]
        }
        let proof = TestProvider.ReceivedDPoPProof(compact: compact, header: header, claims: claims, thumbprint: thumbprint, error: error)
        await context.state.recordDPoPProof(proof, at: endpoint)
    }
}
