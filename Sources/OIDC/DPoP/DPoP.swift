public import Foundation

/// Sender-constrains tokens with DPoP (RFC 9449): a ``DPoPKey`` and the servers' nonces. The one
/// decorator of the two seams that send tokens: ``TokenClient`` (token endpoint and pushed
/// requests) and ``AuthenticatedSession`` (requests to resource servers).
///
/// Each request gets a fresh proof, with the origin's latest nonce; each response's `DPoP-Nonce`
/// is kept; a `use_dpop_nonce` challenge (a 400 at the token endpoint, a 401 `DPoP` challenge at
/// a resource server) gets one retry with the new nonce, and is never a reason to refresh.
public struct DPoP: Sendable {
    /// The key that signs every proof.
    public let key: DPoPKey
    /// The servers' nonces, shared by copies of this value.
    public let nonces: DPoPNonces
    /// The clock of `iat`.
    let now: @Sendable () -> Date

    /// Proofs signed by `key`, with nonces kept in `nonces` (a new cache by default).
    public init(key: DPoPKey, nonces: DPoPNonces = DPoPNonces(), now: @escaping @Sendable () -> Date = { Date() }) {
        self.key = key
        self.nonces = nonces
        self.now = now
    }

    /// `request` with a `DPoP` header: a fresh proof for its method and URL, with `ath` when it
    /// carries `accessToken`, and the origin's nonce when one is known.
    ///
    /// - Throws: what ``DPoPKey/proof(method:url:accessToken:nonce:now:)`` throws.
    public func signing(_ request: HTTPRequest, accessToken: Secret? = nil) throws(OIDCError) -> HTTPRequest {
        var request = request
        let proof = try key.proof(
            method: request.method, url: request.url, accessToken: accessToken, nonce: nonces.nonce(for: request.url), now: now())
        request.headers.set("DPoP", proof)
        return request
    }

    /// Keeps the response's nonce, and says whether the response asks for a retry with it: a
    /// `use_dpop_nonce` error with a new nonce (RFC 9449 §8 at an authorization server, §9 at a
    /// resource server).
    public func nonceChallenged(_ response: HTTPResponse, to url: URL) -> Bool {
        nonces.record(response, from: url)
        return nonces.nonce(for: url) != nil && Self.isNonceChallenge(response)
    }

    /// `400` with `{"error":"use_dpop_nonce"}`, or `401` with `WWW-Authenticate: DPoP error="use_dpop_nonce"`.
    static func isNonceChallenge(_ response: HTTPResponse) -> Bool {
        switch response.status {
        case 400:
            guard let object = try? StrictJSONParser.parseObject(response.body) else { return false }
            return object["error"]?.stringValue == "use_dpop_nonce"
        case 401:
            return resourceChallengeErrors(response).contains("use_dpop_nonce")
        default:
            return false
        }
    }

    /// The `error`s of a 401's `WWW-Authenticate: DPoP` challenges (RFC 9449 §7.1): `use_dpop_nonce`,
    /// `invalid_dpop_proof`, `invalid_token`, …; none for other answers.
    static func resourceChallengeErrors(_ response: HTTPResponse) -> [String] {
        guard response.status == 401 else { return [] }
        return response.headers.values("WWW-Authenticate").flatMap { challenge in
            AuthenticationChallenge.parse(challenge).compactMap { $0.scheme.caseInsensitiveCompare("DPoP") == .orderedSame ? $0.parameters["error"] : nil }
        }
    }
}
