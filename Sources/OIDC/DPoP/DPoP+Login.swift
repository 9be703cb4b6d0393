internal import Foundation
internal import Logging

extension StoredLogin {
    /// Whether this login's tokens are DPoP-bound (RFC 9449): a key thumbprint is kept with them, or
    /// the provider issued them as `token_type` `DPoP`. The one definition the session, the CLI's
    /// `oidc proof` and everything else use.
    package var isDPoPBound: Bool {
        dpopThumbprint != nil || tokens.tokenType.caseInsensitiveCompare("DPoP") == .orderedSame
    }

    /// The key that proves this login's tokens: `nil` for bearer tokens (`isDPoPBound` is `false`).
    ///
    /// - Throws: ``OIDCError/Code/notLoggedIn`` when the tokens are DPoP-bound and their key is
    ///   missing, or is another key than the one they are bound to: nobody can prove them, so the
    ///   user must log in again (context `dpop`: `key-missing` or `key-mismatch`).
    package func dpopProofKey() throws(OIDCError) -> DPoPKey? {
        try dpopProofKey(describedAs: "of this login")
    }

    /// `dpopProofKey()`, its error naming the login as `description` says (`under oidc/alice`,
    /// `of profile 'work'`).
    package func dpopProofKey(describedAs description: String) throws(OIDCError) -> DPoPKey? {
        guard isDPoPBound else { return nil }
        guard let key = dpopKey, let thumbprint = dpopThumbprint, ConstantTime.equals(key.thumbprint, thumbprint) else {
            let what = dpopKey == nil ? "is missing from the stored login" : "is not the key they are bound to"
            throw OIDCError(
                .notLoggedIn,
                "The tokens \(description) are DPoP-bound, and their DPoP key \(what): they cannot be used. Log in again.",
                context: ["dpop": dpopKey == nil ? "key-missing" : "key-mismatch"]
            )
        }
        return key
    }
}

extension DPoP {
    /// Proofs for `login`'s tokens with `nonces`: `nil` for bearer tokens.
    ///
    /// - Throws: what `StoredLogin.dpopProofKey()` throws, naming the login as `description` says.
    static func proofs(
        for login: StoredLogin, describedAs description: String, nonces: DPoPNonces, now: @escaping @Sendable () -> Date
    ) throws(OIDCError) -> DPoP? {
        try login.dpopProofKey(describedAs: description).map { DPoP(key: $0, nonces: nonces, now: now) }
    }

    /// The `token_type`s a token response may have: with DPoP only `DPoP` (and `N_A` where the call
    /// takes it, a token exchange), since a `Bearer` answer would be an unbound token (RFC 9449 §5).
    static func acceptedTokenTypes(_ types: [String], proving dpop: DPoP?) -> [String] {
        guard dpop != nil else { return types }
        return types.contains("N_A") ? ["DPoP", "N_A"] : ["DPoP"]
    }

    /// `error`, a token response refused for its `token_type`, as the downgrade it is when DPoP was
    /// asked for: ``OIDCError/Code/senderConstraintMissing``.
    static func downgrade(_ error: OIDCError, proving dpop: DPoP?) -> OIDCError {
        guard dpop != nil, let type = error.tokenType else { return error }
        return OIDCError(
            .senderConstraintMissing,
            "DPoP was asked for, and the provider answered with a token of type '\(type)': an unbound token is refused (RFC 9449 §5). Register the client for DPoP-bound tokens at the provider, or turn DPoP off.",
            context: ["token_type": type]
        ).refusing(tokenType: type)
    }

    /// What a resource request's log lines say of its proof: `dpop` `true` when it carries one.
    static func logMetadata(proving dpop: DPoP?) -> Logger.Metadata {
        dpop == nil ? [:] : ["dpop": .bool(true)]
    }
}

extension TokenClient {
    /// This client, proving possession of `key` (the key of a login or a new grant) with `nonces`;
    /// bearer tokens when `key` is `nil`.
    func proving(_ key: DPoPKey?, nonces: DPoPNonces, now: @escaping @Sendable () -> Date) -> TokenClient {
        var client = self
        client.dpop = key.map { DPoP(key: $0, nonces: nonces, now: now) }
        return client
    }

    /// This client proving possession of `key` when one is given (a new grant's key); as it is
    /// otherwise.
    func proving(ifGiven key: DPoPKey?, nonces: DPoPNonces, now: @escaping @Sendable () -> Date) -> TokenClient {
        key.map { proving($0, nonces: nonces, now: now) } ?? self
    }
}
