public import Foundation

/// A client registered at an authorization server (RFC 7591 §3.2.1): what a login needs of it
/// (its id, a secret when one was issued, its redirect URIs) and what manages it later (the
/// registration access token and client configuration URI of RFC 7592). The secret and the
/// registration access token are ``Secret``s: never shown, logged or put in an error.
public struct ClientRegistration: Sendable, Equatable {
    /// The issuer the client is registered at: registrations are kept per issuer.
    public var issuer: String
    /// `client_id`.
    public var clientID: String
    /// `client_secret`, for a confidential registration; `nil` for a public one (`none`).
    public var clientSecret: Secret?
    /// `client_secret_expires_at`, when the secret expires (`nil`: never, or no secret).
    public var clientSecretExpiresAt: Date?
    /// `registration_access_token` (RFC 7592 §3), when issued.
    public var registrationAccessToken: Secret?
    /// `registration_client_uri` (RFC 7592 §3), when issued.
    public var registrationClientURI: URL?
    /// The redirect URIs the registration names, as registered.
    public var redirectURIs: [String]

    /// A registration from its parts.
    public init(
        issuer: String, clientID: String, clientSecret: Secret? = nil, clientSecretExpiresAt: Date? = nil, registrationAccessToken: Secret? = nil,
        registrationClientURI: URL? = nil, redirectURIs: [String]
    ) {
        self.issuer = issuer
        self.clientID = clientID
        self.clientSecret = clientSecret
        self.clientSecretExpiresAt = clientSecretExpiresAt
        self.registrationAccessToken = registrationAccessToken
        self.registrationClientURI = registrationClientURI
        self.redirectURIs = redirectURIs
    }

    /// The port of the first loopback redirect URI that names one (`http://127.0.0.1:PORT/…`):
    /// the port a loopback login must bind for a server that matches redirect URIs exactly.
    package var callbackPort: Int? {
        for uri in redirectURIs {
            guard let components = URLComponents(string: uri), components.scheme == "http", let host = components.host,
                EndpointURLPolicy.isLoopback(host: host), let port = components.port
            else { continue }
            return port
        }
        return nil
    }

    /// Whether the secret has expired at `now` (a registration to make again).
    package func isExpired(at now: Date) -> Bool {
        clientSecretExpiresAt.map { $0 <= now } ?? false
    }
}

extension ClientRegistration {
    /// The registration as a JSON object, for a file store (secrets included: the file is 0600).
    func serialized() -> [UInt8] {
        var object: [String: JSONValue] = [
            "version": .number(1), "issuer": .string(issuer), "client_id": .string(clientID),
            "redirect_uris": .array(redirectURIs.map(JSONValue.string)),
        ]
        if let clientSecret { object["client_secret"] = .string(clientSecret.revealedValue) }
        if let clientSecretExpiresAt { object["client_secret_expires_at"] = .number(clientSecretExpiresAt.timeIntervalSince1970.rounded()) }
        if let registrationAccessToken { object["registration_access_token"] = .string(registrationAccessToken.revealedValue) }
        if let registrationClientURI { object["registration_client_uri"] = .string(registrationClientURI.absoluteString) }
        return Array(JSONValue.object(object).jsonText.utf8)
    }

    /// A registration read back from ``serialized()``.
    ///
    /// - Throws: ``OIDCError/Code/corruptStore`` for anything else.
    init(serialized bytes: [UInt8]) throws(OIDCError) {
        func corrupt(_ reason: String) -> OIDCError { OIDCError(.corruptStore, "A stored client registration is unreadable: \(reason).") }
        guard let object = try? StrictJSONParser.parseObject(bytes, maximumDepth: 4) else { throw corrupt("not a JSON object") }
        let members = JSONObjectReader(object, document: "The stored client registration")
        guard let issuer = try? members.nonEmptyString("issuer"), let clientID = try? members.nonEmptyString("client_id"),
            let redirects = try? members.strings("redirect_uris")
        else { throw corrupt("issuer, client_id or redirect_uris missing") }
        self.init(issuer: issuer, clientID: clientID, redirectURIs: redirects)
        clientSecret = (try? members.string("client_secret")).flatMap { $0 }.map(Secret.init)
        clientSecretExpiresAt = (try? members.date("client_secret_expires_at")).flatMap { $0 }
        registrationAccessToken = (try? members.string("registration_access_token")).flatMap { $0 }.map(Secret.init)
        registrationClientURI = (try? members.string("registration_client_uri")).flatMap { $0 }.flatMap(URL.init(string:))
    }
}
