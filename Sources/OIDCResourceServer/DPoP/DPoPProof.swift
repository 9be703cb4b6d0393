public import Foundation
public import OIDC

/// A DPoP proof whose signature and claims passed RFC 9449 §4.3's checks (all but the nonce and
/// the `jti` replay check, which need the server's state).
public struct DPoPProof: Sendable {
    /// The RFC 7638 thumbprint of the proof's key: what a bound token's `cnf.jkt` must be.
    public let thumbprint: String
    /// The algorithm the proof is signed with.
    public let algorithm: JWSAlgorithm
    /// `jti`: the proof's identifier, used once.
    public let identifier: String
    /// `iat`: when the proof was made.
    public let issuedAt: Date
    /// `nonce`, when the proof carries one.
    public let nonce: String?
    /// `ath`, when the proof carries one: the base64url SHA-256 of the access token sent with it.
    public let accessTokenHash: String?
    /// Until when the proof's `jti` must be remembered: after it, the proof is refused for its age anyway.
    public let rememberUntil: Date
    private let members: JSONMembers

    /// Every claim of the proof, as parsed.
    public var claims: [String: JSONValue] { members.dictionary }

    /// What a ``ReplayStore`` remembers of the proof: its `jti` scoped by its key, so two clients'
    /// identical `jti`s never collide (RFC 9449 §11.1).
    public var replayIdentifier: String { "dpop:\(thumbprint):\(identifier)" }

    /// The key thumbprint of an identifier of the form ``replayIdentifier`` (a thumbprint is
    /// base64url, without `:`); `nil` for any other identifier (a logout token's).
    static func keyThumbprint(ofReplayIdentifier identifier: String) -> Substring? {
        guard identifier.hasPrefix("dpop:") else { return nil }
        let rest = identifier.dropFirst(5)
        guard let colon = rest.firstIndex(of: ":"), colon > rest.startIndex else { return nil }
        return rest[..<colon]
    }

    /// Checks that the proof was made for `accessToken`: its `ath` is the token's SHA-256
    /// (RFC 9449 §4.3 step 11, §7.1), compared in constant time.
    ///
    /// - Throws: ``DPoPProofError`` (``AccessRefusal/Rule/accessTokenHashMismatch``) when the proof
    ///   has no `ath` or another one.
    public func checkAccessToken(_ accessToken: String) throws(DPoPProofError) {
        guard let accessTokenHash else {
            throw DPoPProofError(.accessTokenHashMismatch, "The DPoP proof has no ath, the hash of the access token.")
        }
        guard let digest = try? LibCrypto.sha256(Array(accessToken.utf8)), ConstantTime.equals(accessTokenHash, Base64URLEncoding.encode(digest)) else {
            throw DPoPProofError(.accessTokenHashMismatch, "The DPoP proof's ath is not the hash of the access token sent with it.")
        }
    }

    init(
        thumbprint: String, algorithm: JWSAlgorithm, identifier: String, issuedAt: Date, nonce: String?, accessTokenHash: String?,
        rememberUntil: Date, members: JSONMembers
    ) {
        self.accessTokenHash = accessTokenHash
        self.thumbprint = thumbprint
        self.algorithm = algorithm
        self.identifier = identifier
        self.issuedAt = issuedAt
        self.nonce = nonce
        self.rememberUntil = rememberUntil
        self.members = members
    }
}

/// Why a DPoP proof was refused: the rule, and a message that names it without repeating the proof.
public struct DPoPProofError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The rule broken: ``AccessRefusal/Rule/invalidProof``,
    /// ``AccessRefusal/Rule/accessTokenHashMismatch``, or ``AccessRefusal/Rule/duplicateProof``.
    public let rule: AccessRefusal.Rule
    /// What was wrong, safe to send as `error_description`.
    public let message: String

    init(_ rule: AccessRefusal.Rule, _ message: String) {
        self.rule = rule
        self.message = message
    }

    init(_ message: String) { self.init(.invalidProof, message) }

    /// The message: what was wrong, without the proof.
    public var description: String { message }
}
