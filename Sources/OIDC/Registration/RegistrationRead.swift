internal import Foundation
internal import Logging

/// RFC 7592 §2.1: a kept registration read at its client configuration endpoint
/// (`registration_client_uri`, with its `registration_access_token` as a bearer token), to learn
/// before a login whether the server still knows the client. A server that has forgotten it cannot
/// say so during a browser login: it must not redirect to an unknown client's redirect URI (RFC
/// 6749 §4.1.2.1), so the login would only time out.
enum RegistrationRead {
    /// What the read said about the registration.
    enum Outcome: Equatable {
        /// The server knows the client; the registration as it is now (a new registration access
        /// token or secret in the answer replaces the old, as §2.1 requires).
        case known(ClientRegistration)
        /// 401 (§2.1: the client does not exist, or the token is no longer valid), 404, or
        /// `invalid_client`: the server no longer knows the client.
        case forgotten(status: Int)
        /// Nothing can be said: no configuration endpoint or token, a 403 (§2.1: the client exists
        /// and may not read itself), another status, or no answer.
        case unknown
    }

    static func read(
        _ registration: ClientRegistration, transport: any HTTPTransport, options: HTTPRequestOptions, logger: Logger
    ) async -> Outcome {
        guard let url = registration.registrationClientURI, let token = registration.registrationAccessToken else { return .unknown }
        var headers = HTTPHeaders()
        headers.add("Authorization", "Bearer \(token.revealedValue)")
        headers.add("Accept", "application/json")
        let response: HTTPResponse
        do { response = try await transport.send(HTTPRequest(method: "GET", url: url, headers: headers), options: options) } catch {
            logger.debug("the registration could not be read", metadata: ["url": .endpoint(url), "error": .string(error.message)])
            return .unknown
        }
        logger.debug("registration read (RFC 7592)", metadata: ["url": .endpoint(url), "status": .string(String(response.status))])
        switch response.status {
        case 200:
            return .known(updated(registration, by: response))
        case 401, 404:
            return .forgotten(status: response.status)
        case 400..<500 where HTTPErrorMapping.parseProviderError(response)?.error == "invalid_client":
            return .forgotten(status: response.status)
        default:
            return .unknown
        }
    }

    /// `registration` with what a 200 answer replaced: its registration access token, its secret
    /// and the secret's expiry (§2.1), when the answer is this client's and names them.
    static func updated(_ registration: ClientRegistration, by response: HTTPResponse) -> ClientRegistration {
        guard let object = try? StrictJSONParser.parseObject(response.body) else { return registration }
        let members = JSONObjectReader(object, document: "The client configuration answer")
        guard (try? members.nonEmptyString("client_id")) == registration.clientID else { return registration }
        var current = registration
        if let token = (try? members.nonEmptyString("registration_access_token")).flatMap({ $0 }) { current.registrationAccessToken = Secret(token) }
        if let secret = (try? members.nonEmptyString("client_secret")).flatMap({ $0 }) {
            current.clientSecret = Secret(secret)
            let expiry = (try? members.seconds("client_secret_expires_at")).flatMap { $0 }
            current.clientSecretExpiresAt = expiry.flatMap { $0 > 0 ? Date(timeIntervalSince1970: $0) : nil }
        }
        return current
    }
}
