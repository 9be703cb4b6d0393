internal import Foundation

/// DPoP for a resource that takes only DPoP-bound tokens (RFC 9728 §2
/// `dpop_bound_access_tokens_required`): a relying party made for it whose configuration has DPoP
/// off binds its logins' tokens to a new key each, as ``DPoPUse/on`` does, because a bearer token
/// would be refused by the resource after the user had signed in for it.
enum ResourceDPoP {
    /// The algorithms a new key may use, in the order they are preferred: ES256 (what every DPoP
    /// server takes) first.
    static let preferred: [JWSAlgorithm] = [.es256, .edDSA, .ps256, .es384, .es512, .rs256]

    /// `configuration` with DPoP on when the document requires bound tokens and it is off; as it
    /// is otherwise (a configured key or algorithm is kept). The key's algorithm is the first of
    /// ``preferred`` that both the resource (`dpop_signing_alg_values_supported` of its document)
    /// and the authorization server (of its metadata) list, an empty list taking any; ES256 when
    /// none is in both (the login then says which algorithms the server takes).
    static func configuration(
        _ configuration: RelyingParty.Configuration, document: ProtectedResourceMetadata, serverAlgorithms: [String]?
    ) -> (configuration: RelyingParty.Configuration, turnedOn: Bool) {
        guard document.dpopBoundAccessTokensRequired, configuration.dpop == .off else { return (configuration, false) }
        let server = serverAlgorithms ?? []
        let algorithm =
            preferred.first { candidate in
                (document.dpopSigningAlgorithms.isEmpty || document.dpopSigningAlgorithms.contains(candidate))
                    && (server.isEmpty || server.contains(candidate.rawValue))
            } ?? .es256
        var bound = configuration
        bound.dpop = .newKeyPerLogin(algorithm)
        return (bound, true)
    }
}
