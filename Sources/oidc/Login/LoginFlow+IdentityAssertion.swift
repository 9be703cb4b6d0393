import ArgumentParser
import Foundation
import OIDC

extension LoginFlow {
    /// `--resource URL --identity-assertion-from PROFILE` (MCP's enterprise-managed authorization):
    /// no browser, no registration. The resource's authorization server is found from its RFC 9728
    /// metadata (or `--issuer` among those it lists); with the login of PROFILE at the user's
    /// identity provider, an identity assertion (ID-JAG) is asked for there (a token exchange of its
    /// ID token, for that server and the resource), then traded at that server's token endpoint in
    /// the JWT bearer grant, with `resource`, as `--client-id` (else the client the ID-JAG names,
    /// its `client_id`). The ID-JAG goes to that token endpoint only; it is never printed, logged or
    /// kept. An expired ID token is refreshed at the identity provider first.
    func identityAssertionLogin(from source: StoreSelection, transport: NIOHTTPTransport) async throws -> StoredLogin {
        guard let resource = profile.resource, let url = URL(string: resource) else {
            throw ValidationError("--identity-assertion-from goes with --resource URL")
        }
        // The identity provider's login first: a profile that has none stops here, before any request.
        let idp = try ProfileLogin.load(source, logger: CLILog.logger(.store))
        let issuer = try await RelyingParty.authorizationServer(
            forResource: url, requested: profile.issuer ?? profile.resourceIssuer, transport: transport,
            requestOptions: HTTPRequestOptions(timeout: .seconds(15)), logger: CLILog.logger(.discovery))
        // The server's relying party: its metadata as a plain OAuth server's (no ID token comes), the
        // tokens for the resource; read before the ID-JAG is asked for when the client is known.
        var asserted = self
        asserted.flow = .jwtBearer
        asserted.profile.issuer = issuer
        var server: RelyingParty?
        if profile.clientID != nil { server = try await asserted.relyingParty(transport: transport) }
        let idpParty = try idp.relyingParty(transport: transport, clientSecretFile: nil)
        let idToken = try await Self.currentIDToken(of: idp, transport: transport)
        let assertion = try await idpParty.tokenClient.requestIdentityAssertion(
            idToken: idToken, audience: issuer, resource: resource, scopes: profile.scopes)
        if server == nil {
            // No --client-id: the client the identity provider named in the ID-JAG.
            asserted.profile.clientID = try Self.namedClient(in: assertion)
            server = try await asserted.relyingParty(transport: transport)
        }
        guard let rp = server else { throw OIDCError(.invalidArgument, "No client for the resource's authorization server.") }
        let dpopKey = try rp.newLoginDPoPKey()
        // --param and --authorization-details go with the grant, as on any JWT bearer login.
        let tokens = try await rp.tokenClient(proving: dpopKey).jwtBearer(assertion: assertion, scopes: profile.scopes, parameters: profile.parameters)
        var stored = StoredLogin(
            tokens: tokens, issuer: rp.provider.issuer, clientID: rp.clientID, subject: nil, provider: rp.provider, attributes: attributes)
        stored.resource = resource
        stored.dpopKey = dpopKey
        return try await rp.save(stored, in: keychain, as: key)
    }

    /// The client the identity provider named in the ID-JAG (`client_id`: the client at the
    /// resource's authorization server).
    private static func namedClient(in assertion: Secret) throws -> String {
        guard let named = (try? UnverifiedJWT(assertion.revealedValue))?.claims["client_id"]?.stringValue, !named.isEmpty,
            !named.unicodeScalars.contains(where: { $0.value < 0x21 || $0.value == 0x7F })
        else {
            throw OIDCError(
                .missingParameter,
                "The identity provider's ID-JAG names no client_id for the resource's authorization server: give --client-id, the client registered there.")
        }
        return named
    }

    /// The identity provider's ID token for the exchange: the stored one while it is valid, else the
    /// one a refresh of that login brings.
    ///
    /// - Throws: `notLoggedIn` naming the profile when its login has no ID token, or it expired and
    ///   the refresh brought none.
    private static func currentIDToken(of idp: ProfileLogin, transport: NIOHTTPTransport) async throws -> Secret {
        let name = idp.options.profileName
        let missing = OIDCError(
            .notLoggedIn,
            "Profile '\(name)' has no valid ID token for the identity assertion: log in there first (\(idp.loginAgain)).",
            context: ["profile": name])
        guard let stored = idp.login.tokens.idToken else { throw missing }
        let expiry = (try? UnverifiedJWT(stored.revealedValue))?.claims["exp"]?.numberValue
        if let expiry, expiry > CLIClock.now().timeIntervalSince1970 + 30 { return stored }
        let session = try idp.session(transport: transport, clientSecretFile: nil, allowlist: HostAllowlist([]))
        guard let refreshed = try await session.validTokens(forceRefresh: true).idToken else { throw missing }
        return refreshed
    }
}
