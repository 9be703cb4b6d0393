import Foundation
import OIDC

extension LoginFlow {
    /// Client credentials (RFC 6749 §4.4): the client's own tokens, kept under the profile like a
    /// person's login, with what to ask for again (scopes, `--param`) in its attributes, so that
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
        let dpopKey = try rp.makeDPoPKey()
        let tokens = try await rp.tokenClient(proving: dpopKey).clientCredentials(scopes: request.scopes, parameters: request.parameters)
        var stored = StoredLogin(
            tokens: tokens, issuer: rp.provider.issuer, clientID: rp.clientID, subject: nil, provider: rp.provider,
            attributes: attributes.merging(request.attributes) { $1 }
        )
        stored.dpopKey = dpopKey
        let login = stored
        do { try await keychain.withLock(key) { try keychain.save(login, for: key) } } catch let error as OIDCError { throw error } catch {
            throw OIDCError(.storageFailure, "The tokens could not be stored: \(error)")
        }
        return stored
    }
}

/// What a client-credentials login asks for, kept with it as attributes so that the tokens that
/// replace it ask for the same.
struct ClientCredentialsRequest: Equatable {
    enum Attribute {
        /// `client_credentials` marks a login of the client itself.
        static let grant = "grant_type"
        /// The scopes, space-separated.
        static let scope = "scope"
        /// The other parameters, form-encoded.
        static let parameters = "parameters"
    }

    static let grant = "client_credentials"

    var scopes: [String]
    var parameters: [OAuthParameter]

    init(scopes: [String], parameters: [OAuthParameter]) {
        self.scopes = scopes
        self.parameters = parameters
    }

    /// The request of a stored login, `nil` when it is not a client-credentials login.
    init?(of login: StoredLogin) {
        guard login.attributes[Attribute.grant] == Self.grant else { return nil }
        scopes = (login.attributes[Attribute.scope] ?? "").split(separator: " ").map(String.init)
        parameters = (try? FormURLEncoding.decode(login.attributes[Attribute.parameters] ?? "", allowDuplicates: true)) ?? []
    }

    var attributes: [String: String] {
        var attributes = [Attribute.grant: Self.grant]
        if !scopes.isEmpty { attributes[Attribute.scope] = scopes.joined(separator: " ") }
        if !parameters.isEmpty { attributes[Attribute.parameters] = FormURLEncoding.encode(parameters) }
        return attributes
    }
}
