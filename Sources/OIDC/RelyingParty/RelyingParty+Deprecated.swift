internal import Foundation

/// The settings of a ``RelyingParty`` as they were before ``RelyingParty/Configuration``: changed on
/// a copy after it was made. Each forwards into the copy's configuration.
extension RelyingParty {
    /// When ``authorizationURL(for:)`` pushes a login's parameters to the provider (RFC 9126).
    @available(*, deprecated, message: "pass RelyingParty.Configuration(frontChannel: .pushed) to the initializer; read configuration.frontChannel.pushedAuthorization")
    public var pushedAuthorization: PushedAuthorizationUse {
        get { configuration.frontChannel.pushedAuthorization }
        set { configuration.frontChannel.pushedAuthorization = newValue }
    }

    /// The client's private key that signs every authorization request as a request object (RFC 9101).
    @available(*, deprecated, message: "pass RelyingParty.Configuration(frontChannel: .signed(key)) (or .pushed(signedWith: key)) to the initializer; read configuration.frontChannel.requestObjectKey")
    public var requestObjectKey: JWSSigningKey? {
        get { configuration.frontChannel.requestObjectKey }
        set { configuration.frontChannel.requestObjectKey = newValue }
    }

    /// Whether logins get DPoP-bound tokens (RFC 9449), and with which key.
    @available(*, deprecated, message: "pass RelyingParty.Configuration(dpop: .on) to the initializer; read configuration.dpop")
    public var dpop: DPoPUse {
        get { configuration.dpop }
        set { configuration.dpop = newValue }
    }

    /// The security profile every login is held to.
    @available(*, deprecated, message: "pass RelyingParty.Configuration(securityProfile: .fapi2) to the initializer; read configuration.securityProfile")
    public var securityProfile: SecurityProfile {
        get { configuration.securityProfile }
        set { configuration.securityProfile = newValue }
    }

    /// The `response_mode` of every login's request.
    @available(*, deprecated, message: "pass RelyingParty.Configuration(responseMode: .jwt) to the initializer; read configuration.responseMode")
    public var responseMode: AuthorizationResponseMode? {
        get { configuration.responseMode }
        set { configuration.responseMode = newValue }
    }

    /// The signature algorithms FAPI 2.0 allows (Security Profile §5.4.1).
    @available(*, deprecated, message: "use SecurityProfile.fapi2.signatureAlgorithms")
    public static var fapi2Algorithms: Set<JWSAlgorithm> { SecurityProfileRule.fapi2Algorithms }

    /// Checks this relying party's settings against its security profile before a login sends anything.
    ///
    /// - Throws: ``OIDCError/Code/profileViolation`` naming the rule broken and what to set.
    @available(*, deprecated, message: "use configuration.securityProfile.validate(relyingParty)")
    public func checkSecurityProfile() throws(OIDCError) {
        try configuration.securityProfile.validate(self)
    }

    /// Saves `login` in `store` under `key`, under the store's lock, and returns the session over it.
    ///
    /// - Throws: the store's errors, as ``OIDCError`` (`storageFailure` for another error type).
    @available(*, deprecated, message: "use save(_:in:as:attributes:), then session(store:key:allowlist:options:)")
    public func keep(
        _ login: VerifiedLogin, in store: some TokenStore, as key: TokenStoreKey, allowlist: HostAllowlist,
        attributes: [String: String] = [:], options: AuthenticatedSession.Options = AuthenticatedSession.Options()
    ) async throws(OIDCError) -> AuthenticatedSession {
        try await save(login, in: store, as: key, attributes: attributes)
        return session(store: store, key: key, allowlist: allowlist, options: options)
    }

    /// Saves `login` in `store` under `key`, under the store's lock, and returns the session over it.
    ///
    /// - Throws: the store's errors, as ``OIDCError`` (`storageFailure` for another error type).
    @available(*, deprecated, message: "use save(_:in:as:), then session(store:key:allowlist:options:)")
    public func keep(
        _ login: StoredLogin, in store: some TokenStore, as key: TokenStoreKey, allowlist: HostAllowlist,
        options: AuthenticatedSession.Options = AuthenticatedSession.Options()
    ) async throws(OIDCError) -> AuthenticatedSession {
        try await save(login, in: store, as: key)
        return session(store: store, key: key, allowlist: allowlist, options: options)
    }

    /// A key for a new login, as the configuration's ``Configuration/dpop`` says; `nil` when DPoP is
    /// off: a step of the library's own logins, public by mistake.
    ///
    /// - Throws: ``OIDCError/Code/invalidArgument`` when the provider names the algorithms it
    ///   takes for proofs and the key's is not one; what ``DPoPKey/generate(_:)`` throws.
    @available(*, deprecated, message: "makeDPoPKey() is internal plumbing: the logins (loopbackLogin, deviceLogin, completeLogin, serviceSession) make their key as configuration.dpop says; for a grant you call yourself, pass DPoPKey.generate(_:) (or your own key) to tokenClient(proving:)")
    public func makeDPoPKey() throws(OIDCError) -> DPoPKey? {
        try newLoginDPoPKey()
    }
}
