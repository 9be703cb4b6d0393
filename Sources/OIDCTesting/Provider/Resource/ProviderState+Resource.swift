internal import Foundation
internal import OIDC

/// Resource-bound tokens (RFC 8707) and dynamically registered clients (RFC 7591).
extension ProviderState {
    /// The audience of tokens a token request asks for: the `resource` it names, which must be the
    /// one the login was granted for when the login named one (RFC 8707 §2.2: `invalid_target`
    /// otherwise); without one, the login's.
    func grantedResource(asked: String?, family familyID: String) throws(OAuthError) -> String? {
        let granted = families[familyID]?.resource
        guard let asked else { return granted }
        if let granted, granted != asked {
            throw OAuthError(code: "invalid_target", description: "The resource differs from the one the login was granted for.")
        }
        return asked
    }

    /// An RFC 9068 JWT access token for `audience`, signed with the provider's current key: what a
    /// resource server that checks `aud` takes. Its text is also the provider's record key.
    func resourceAccessToken(family: TokenFamily, scope: String, audience: String, jkt: String?, issuedAt: Date) throws(OAuthError) -> String {
        let iat = Int(issuedAt.timeIntervalSince1970)
        var claims: [String: Any] = [
            "iss": issuer, "sub": family.user.subject, "aud": audience, "client_id": family.clientID, "scope": scope, "iat": iat,
            "exp": iat + configuration.accessTokenLifetime, "jti": try Self.randomToken(),
        ]
        if let jkt { claims["cnf"] = ["jkt": jkt] }
        // RFC 9396 §9.1: what was granted, in the token.
        if let details = family.authorizationDetails { claims["authorization_details"] = details.elements.map(\.foundationValue) }
        do {
            return try keys.signingKey(configuration.idTokenAlgorithm).sign(claims: claims, extraHeader: ["typ": "at+jwt"])
        } catch {
            throw OAuthError(code: "server_error", description: "The provider could not sign the access token.", status: 500)
        }
    }

    /// Keeps a registered client; its id and registration access token are new random values.
    /// `counted` false replaces the token of a client kept already (not a new registration).
    func register(_ client: TestProvider.Client, accessToken: String?, counted: Bool = true) {
        registrations.clients[client.id] = (client, accessToken.map(Secret.init))
        if counted { registrations.count += 1 }
    }

    /// Counts a request to a client configuration endpoint (RFC 7592) by its method.
    func countRegistrationRead(_ method: String) {
        if method == "GET" { registrations.reads += 1 }
    }

    /// The dynamically registered clients.
    var registeredClients: [TestProvider.Client] { registrations.clients.values.map(\.client) }

    /// The registered client `id`, when its registration access token is `token` (RFC 7592 §3).
    func registeredClient(_ id: String, accessToken token: String) -> TestProvider.Client? {
        guard let entry = registrations.clients[id], let expected = entry.accessToken, expected == Secret(token) else { return nil }
        return entry.client
    }

    /// Forgets every registered client: their ids are unknown from now on (`invalid_client`).
    func forgetRegistrations() { registrations.clients = [:] }
}

/// The clients `/register` made, by id, with their registration access tokens.
struct RegistrationLedger: Sendable {
    var clients: [String: (client: TestProvider.Client, accessToken: Secret?)] = [:]
    /// How many registrations were made, forgotten ones included.
    var count = 0
    /// How many `GET`s the client configuration endpoints had (RFC 7592 §2.1).
    var reads = 0
}

extension ProviderState {
    /// Forgets one registered client (RFC 7592 §2.3).
    func unregister(_ id: String) { registrations.clients[id] = nil }
}

/// RFC 7591 §2 `grant_types`: the grant types a dynamically registered client "will restrict
/// itself to using"; the provider holds it to them, as the MCP Python SDK's server and most
/// servers do.
enum RegisteredGrants {
    static let deviceCode = "urn:ietf:params:oauth:grant-type:device_code"

    /// `unauthorized_client` (RFC 6749 §5.2) when `client` registered grant types and `grantType` is not one.
    static func check(_ client: TestProvider.Client, uses grantType: String) throws(OAuthError) {
        guard let registered = client.registeredGrantTypes, !registered.contains(grantType) else { return }
        throw OAuthError(code: "unauthorized_client", description: "This client did not register the grant type \(grantType) (RFC 7591 grant_types).")
    }
}

extension TestProvider {
    /// The grant types `clientID` registered (RFC 7591 `grant_types`), if it is a registered client.
    public func registeredGrantTypes(of clientID: String) async -> Set<String>? {
        await state.registeredClients.first { $0.id == clientID }?.registeredGrantTypes
    }
}
