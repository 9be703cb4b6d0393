internal import Foundation
internal import OIDC

/// Client authentication at the token and revocation endpoints (RFC 6749 §2.3.1, RFC 7523, OIDC
/// Core §9): each client must use the method it registered.
enum ClientAuthenticator {
    static func authenticate(
        _ request: ProviderRequest, _ parameters: [OAuthParameter], _ context: ProviderContext
    ) async throws(OAuthError) -> TestProvider.Client {
        let authorization = request.headerValues("Authorization")
        guard authorization.count <= 1 else { throw .invalidRequest("Authorization appears more than once.") }
        let bodyID = parameters["client_id"]
        let bodySecret = parameters["client_secret"]

        if let assertion = parameters["client_assertion"] {
            guard authorization.isEmpty, bodySecret == nil else {
                throw .invalidRequest("Use one client authentication method, not an assertion and a secret.")
            }
            return try await ClientAssertionCheck.authenticate(assertion, type: parameters["client_assertion_type"], bodyID: bodyID, request, context)
        }

        if let header = authorization.first {
            let credentials = try basicCredentials(header)
            guard bodySecret == nil else {
                throw .invalidRequest("Use one client authentication method, not both Basic and client_secret.")
            }
            if let bodyID, bodyID != credentials.id {
                throw .invalidRequest("client_id in the body differs from the one in Authorization.")
            }
            let client = try registered(credentials.id, context)
            guard client.authentication == .clientSecretBasic else {
                throw .invalidClient("This client is not registered for client_secret_basic.")
            }
            try check(credentials.secret, of: client)
            return client
        }
        if let bodySecret {
            guard let bodyID, !bodyID.isEmpty else { throw .invalidClient("client_secret was sent without client_id.") }
            let client = try registered(bodyID, context)
            guard client.authentication == .clientSecretPost else {
                throw .invalidClient("This client is not registered for client_secret_post.")
            }
            try check(bodySecret, of: client)
            return client
        }
        guard let bodyID, !bodyID.isEmpty else { throw .invalidClient("The request carries no client authentication.") }
        let client = try registered(bodyID, context)
        switch client.authentication {
        case .none:
            return client
        case .tlsClientAuth, .selfSignedTLSClientAuth:
            try MutualTLSClientCheck.authenticate(client, certificate: request.clientCertificate, context)
            return client
        default:
            throw .invalidClient("This client must authenticate with its secret (\(client.authentication.rawValue)).")
        }
    }

    static func registered(_ id: String, _ context: ProviderContext) throws(OAuthError) -> TestProvider.Client {
        guard let client = context.client(id) else { throw .invalidClient("The client is not registered.") }
        return client
    }

    /// Compares in constant time (``Secret``'s `==`).
    private static func check(_ presented: String, of client: TestProvider.Client) throws(OAuthError) {
        guard let secret = client.secret, Secret(presented) == secret else {
            throw .invalidClient("The client secret is wrong.")
        }
    }

    /// `Basic base64(urlencode(id) ":" urlencode(secret))`, decoded (RFC 6749 §2.3.1).
    static func basicCredentials(_ header: String) throws(OAuthError) -> (id: String, secret: String) {
        let parts = header.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].lowercased() == "basic" else {
            throw .invalidClient("Only Basic client authentication is accepted in Authorization.")
        }
        guard let data = Data(base64Encoded: String(parts[1]).trimmingCharacters(in: .whitespaces)),
            let text = String(data: data, encoding: .utf8), let colon = text.firstIndex(of: ":"),
            let id = PercentEncoding.decode(text[..<colon], plusIsSpace: true),
            let secret = PercentEncoding.decode(text[text.index(after: colon)...], plusIsSpace: true),
            !id.isEmpty
        else {
            throw .invalidClient("The Basic credentials are malformed.")
        }
        return (id, secret)
    }
}
