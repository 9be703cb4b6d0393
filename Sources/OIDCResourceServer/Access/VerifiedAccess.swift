public import Foundation
public import OIDC

/// A request whose access token passed every check: who it is for, what it allows, and how it
/// is bound.
public struct VerifiedAccess: Sendable {
    /// How the token is tied to its holder.
    public enum Binding: Sendable, Hashable {
        /// Not bound: whoever holds the token can use it (RFC 6750).
        case bearer
        /// Bound to a DPoP key (RFC 9449): `cnf.jkt`, the RFC 7638 thumbprint of the key whose
        /// proof came with the request.
        case dpop(keyThumbprint: String)
        /// Bound to a client certificate (RFC 8705 §3): `cnf["x5t#S256"]`, the SHA-256 thumbprint
        /// of the certificate the connection presented.
        case certificate(thumbprint: String)
        /// Bound to both a DPoP key and a client certificate; both were checked.
        case dpopAndCertificate(keyThumbprint: String, certificateThumbprint: String)

        /// The DPoP key's thumbprint, when the token is DPoP-bound.
        public var keyThumbprint: String? {
            switch self {
            case .dpop(let key), .dpopAndCertificate(let key, _): key
            case .bearer, .certificate: nil
            }
        }

        /// The certificate's thumbprint, when the token is certificate-bound.
        public var certificateThumbprint: String? {
            switch self {
            case .certificate(let certificate), .dpopAndCertificate(_, let certificate): certificate
            case .bearer, .dpop: nil
            }
        }
    }

    /// Where the token's facts come from.
    public enum Source: Sendable, Hashable {
        /// A JWT access token verified here (RFC 9068).
        case jwt(algorithm: JWSAlgorithm, keyID: String?)
        /// An opaque token the authorization server vouched for (RFC 7662 introspection).
        case introspection
    }

    /// `sub`: the resource owner, or the client for a client-credentials token.
    public let subject: String?
    /// `client_id` (or `azp` for providers that use it): the client the token was issued to.
    public let clientID: String?
    /// `scope`, split into its values.
    public let scopes: Set<String>
    /// `iss`: the authorization server that issued the token.
    public let issuer: String?
    /// `aud`: the token's audiences (one of them is this resource's).
    public let audience: [String]
    /// `exp`: when the token expires (required of JWTs; an introspection answer may lack it).
    public let expiresAt: Date?
    /// `iat`, when present.
    public let issuedAt: Date?
    /// `jti`, when present.
    public let tokenID: String?
    /// `authorization_details` (RFC 9396): what the token grants as structured data (a payment's
    /// amount and creditor, an account's actions), from the JWT claim or the introspection member;
    /// each an object with a string `type`. Empty when the token has none.
    public let authorizationDetails: [JSONValue]
    /// How the token is bound; the request proved possession where it is.
    public let binding: Binding
    /// Where the facts come from.
    public let source: Source
    /// Headers the answer must carry: `DPoP-Nonce` when a new nonce takes over (RFC 9449 §8.2).
    public let responseHeaders: HTTPHeaders
    private let facts: TokenFacts

    /// The token type the client used: `DPoP` for a DPoP-bound token, `Bearer` otherwise.
    public var tokenType: String { binding.keyThumbprint == nil ? "Bearer" : "DPoP" }

    /// Every claim of the token (or member of the introspection answer), as received.
    public var claims: [String: JSONValue] { facts.allClaims }

    /// Whether the token grants every one of `scopes`.
    public func hasScopes(_ required: Set<String>) -> Bool { required.isSubset(of: scopes) }

    /// The members of each of ``authorizationDetails`` whose `type` is `type`, in order.
    public func authorizationDetails(ofType type: String) -> [[String: JSONValue]] {
        authorizationDetails.compactMap { detail in
            guard case .object(let members) = detail, members["type"] == .string(type) else { return nil }
            return members
        }
    }

    init(_ facts: TokenFacts, authorizationDetails: [JSONValue], binding: Binding, responseHeaders: HTTPHeaders) {
        self.subject = facts.subject
        self.clientID = facts.clientID
        self.scopes = facts.scopes
        self.issuer = facts.issuer
        self.audience = facts.audience
        self.expiresAt = facts.expiresAt
        self.issuedAt = facts.issuedAt
        self.tokenID = facts.tokenID
        self.authorizationDetails = authorizationDetails
        self.binding = binding
        self.source = facts.source
        self.responseHeaders = responseHeaders
        self.facts = facts
    }
}
