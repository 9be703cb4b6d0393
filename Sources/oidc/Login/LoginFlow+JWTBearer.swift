import ArgumentParser
import Foundation
import OIDC

extension LoginFlow {
    /// The JWT bearer grant (RFC 7523 §2.1): the content of `--assertion-file` (trimmed, never
    /// printed) traded for tokens in one token request, with the client's authentication when it
    /// has credentials; no retry and no other grant after a refusal. The login is kept under the
    /// profile with what it asked for as its grant, so that `oidc token`, `oidc request` and
    /// exec-credential present the file's current content again when the access token expires
    /// (a workload identity file its owner rotates); there is no refresh token, and no ID token.
    func jwtBearerLogin(_ rp: RelyingParty) async throws -> StoredLogin {
        guard let path = profile.assertionFile else {
            throw ValidationError("--flow jwt-bearer needs --assertion-file FILE: the JWT to present (a workload identity token)")
        }
        let assertion = try AssertionFile.read(path)
        let request = JWTBearerRequest(scopes: profile.scopes, parameters: profile.parameters)
        let dpopKey = try rp.newLoginDPoPKey()
        let tokens = try await rp.tokenClient(proving: dpopKey).jwtBearer(assertion: assertion, scopes: request.scopes, parameters: request.parameters)
        var stored = StoredLogin(
            tokens: tokens, issuer: rp.provider.issuer, clientID: rp.clientID, subject: nil, provider: rp.provider, attributes: attributes)
        stored.grant = request.grant
        stored.resource = rp.tokenClient.resource
        stored.dpopKey = dpopKey
        return try await rp.save(stored, in: keychain, as: key)
    }
}

/// The file `--assertion-file` names: read as a secret file is (this user's own, not readable or
/// writable by others), at each grant.
enum AssertionFile {
    static func read(_ path: String) throws(OIDCError) -> Secret {
        try ClientSecretFile.read(path, flag: "--assertion-file")
    }
}

/// What a JWT bearer login asks for, kept with it as its grant (``StoredLogin/grant``) so that the
/// tokens that replace it ask for the same.
struct JWTBearerRequest: Equatable {
    var scopes: [String]
    var parameters: [OAuthParameter]

    init(scopes: [String], parameters: [OAuthParameter]) {
        self.scopes = scopes
        self.parameters = parameters
    }

    /// The request of a stored login, `nil` when it is not a JWT bearer login.
    init?(of login: StoredLogin) {
        guard let grant = login.grant, grant.isJWTBearerGrant else { return nil }
        scopes = grant.scopes
        parameters = grant.parameters
    }

    /// The grant kept with the login.
    var grant: StoredLogin.Grant { .jwtBearer(scopes: scopes, parameters: parameters) }
}

extension StoredLogin {
    /// Whether new tokens come from a grant of the client's own (client credentials, or the JWT
    /// bearer grant with the assertion file), asked anew when they expire: no refresh token needed.
    var renewsByOwnGrant: Bool { ClientCredentialsRequest(of: self) != nil || JWTBearerRequest(of: self) != nil }
}
