import Foundation
import OIDC

extension LoginFlow {
    /// Client credentials (RFC 6749 §4.4): the client's own tokens, kept under the profile like a
    /// person's login, with what to ask for again (scopes, `--param`) as its grant, so that
    /// `oidc token`, `oidc request` and exec-credential ask anew when the token expires: there is no
    /// refresh token, and no ID token.
    func clientCredentialsLogin(_ rp: RelyingParty) async throws -> StoredLogin {
        guard rp.tokenClient.authentication.method != .none else {
            throw OIDCError(
                .invalidArgument,
                "--flow client-credentials needs the client's credentials: give --client-secret-file FILE or --private-key-file FILE."
            )
        }
        let request = ClientCredentialsRequest(scopes: profile.scopes, parameters: profile.parameters)
        let dpopKey = try rp.newLoginDPoPKey()
        let tokens = try await rp.tokenClient(proving: dpopKey).clientCredentials(scopes: request.scopes, parameters: request.parameters)
        var stored = StoredLogin(
            tokens: tokens, issuer: rp.provider.issuer, clientID: rp.clientID, subject: nil, provider: rp.provider,
            // The grant in its attributes too, for an earlier oidc that shares the store.
            attributes: attributes.merging(request.grant.legacyAttributes) { $1 }
        )
        stored.grant = request.grant
        stored.resource = rp.tokenClient.resource
        stored.dpopKey = dpopKey
        return try await rp.save(stored, in: keychain, as: key)
    }
}

/// What a client-credentials login asks for, kept with it as its grant (``StoredLogin/grant``) so
/// that the tokens that replace it ask for the same.
struct ClientCredentialsRequest: Equatable {
    static let grant = StoredLogin.Grant.clientCredentials().type

    var scopes: [String]
    var parameters: [OAuthParameter]

    init(scopes: [String], parameters: [OAuthParameter]) {
        self.scopes = scopes
        self.parameters = parameters
    }

    /// The request of a stored login, `nil` when it is not a client-credentials login (a login an
    /// earlier version stored names its grant in attributes, which the store reads as its grant).
    init?(of login: StoredLogin) {
        guard let grant = login.grant, grant.isClientCredentialsGrant else { return nil }
        scopes = grant.scopes
        parameters = grant.parameters
    }

    /// The grant kept with the login.
    var grant: StoredLogin.Grant { .clientCredentials(scopes: scopes, parameters: parameters) }
}
