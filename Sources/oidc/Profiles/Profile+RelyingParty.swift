import OIDC

extension Profile {
    /// Applies the profile's settings to the configuration of the relying party of `provider`: `--par` (every browser login's request
    /// pushed), `--dpop` (the tokens bound to a new key of each login), `--fapi2` (the FAPI 2.0
    /// Security Profile, which also holds refreshed ID tokens to its algorithms), `--jarm` (signed
    /// authorization responses), and the key that signs request objects: with `--request-object`,
    /// or when the provider takes only signed request objects and the profile names a private key
    /// (without one, a browser login stops before anything is sent, saying what to give).
    ///
    /// The one place where a remembered setting reaches the relying party, for a login
    /// (`LoginFlow`) and for the commands that use a stored login (`ProfileLogin`).
    ///
    /// - Throws: a usage error (exit 2) when the request objects' key cannot be used.
    func configure(_ configuration: inout RelyingParty.Configuration, provider: ProviderConfiguration) throws {
        if pushedAuthorization { configuration.frontChannel.pushedAuthorization = .always }
        if dpop { configuration.dpop = .on }
        if fapi2 { configuration.securityProfile = .fapi2 }
        if signedResponses { configuration.responseMode = .jwt }
        if signsRequestObjects || (provider.requiresSignedRequestObjects && privateKeyFile != nil) {
            configuration.frontChannel.requestObjectKey = try requestObjectKey()
        }
    }
}
