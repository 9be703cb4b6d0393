extension AuthorizationResponseMode {
    /// Whether the response comes as a signed JWT (JARM) that must be verified before anything in
    /// it is believed: ``jwt`` and ``queryJWT``.
    @available(*, deprecated, message: "compare with the cases: mode != .query (AuthorizationResponse(callbackURL:request:verifier:keys:now:) reads a JARM callback)")
    public var isJWTSecured: Bool { isJARM }
}
