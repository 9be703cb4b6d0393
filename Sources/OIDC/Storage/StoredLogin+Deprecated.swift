extension StoredLogin.Grant {
    /// Whether the tokens are the client's own (client credentials).
    @available(*, deprecated, message: "compare the grant's type: grant.type == .clientCredentials")
    public var isClientCredentials: Bool { isClientCredentialsGrant }
}
