extension LoopbackLogin {
    /// A loopback login with the defaults: 127.0.0.1, the system browser, 180 s.
    @available(*, deprecated, message: "use relyingParty.loopbackLogin(scopes:), which makes the same login")
    public init(relyingParty: RelyingParty, scopes: [String]? = nil) { self.init(for: relyingParty, scopes: scopes) }
}
