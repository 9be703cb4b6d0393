internal import Foundation
internal import Logging

/// RFC 7591 dynamic registration of a native public client: one `POST` of its metadata to the
/// server's `registration_endpoint`.
enum DynamicRegistration {
    /// The device authorization grant's type (RFC 8628 §3.4).
    static let deviceGrantType = "urn:ietf:params:oauth:grant-type:device_code"

    /// Registers a client whose only redirect URI is `redirectURI` (the loopback callback),
    /// `token_endpoint_auth_method` `none`, `grant_types` `authorization_code` and `refresh_token`
    /// (and the device grant when `deviceGrant`), `response_types` `code`, `application_type`
    /// `native` and `client_name` `clientName`; and `client_confidential` `false`, glewlwyd's own
    /// name for a public client: glewlwyd 2.7.5 (Debian's) stores a client registered with
    /// `none` as confidential, without a secret, and refuses its token requests. Servers ignore
    /// members they do not know (RFC 7591 §2), so it changes nothing elsewhere.
    ///
    /// - Throws: ``OIDCError/Code/providerError`` for the server's refusal (RFC 7591 §3.2.2);
    ///   ``OIDCError/Code/malformedResponse`` for an answer without `client_id` (§3.2.1), with a
    ///   `client_id` outside RFC 6749's VSCHAR (Appendix A.1, named by its code point), or that is
    ///   no JSON object; transport errors. A `registration_client_uri` on another origin than the
    ///   registration endpoint's and the issuer's is left out (``ClientConfigurationURI``). Nothing of the answer appears in an error or a log
    ///   line but its error code.
    static func register(
        at endpoint: URL, issuer: String, redirectURI: String, clientName: String, deviceGrant: Bool = false, transport: any HTTPTransport,
        options: HTTPRequestOptions, logger: Logger
    ) async throws(OIDCError) -> ClientRegistration {
        let grantTypes = ["authorization_code", "refresh_token"] + (deviceGrant ? [deviceGrantType] : [])
        let metadata: JSONValue = .object([
            "redirect_uris": .array([.string(redirectURI)]), "token_endpoint_auth_method": .string("none"),
            "grant_types": .array(grantTypes.map(JSONValue.string)), "response_types": .array([.string("code")]),
            "application_type": .string("native"), "client_name": .string(clientName), "client_confidential": .bool(false),
        ])
        var headers = HTTPHeaders()
        headers.add("Content-Type", "application/json")
        headers.add("Accept", "application/json")
        let response = try await transport.send(
            HTTPRequest(method: "POST", url: endpoint, headers: headers, body: Array(metadata.jsonText.utf8)), options: options)
        guard response.status == 201 || response.status == 200 else {
            logger.debug("dynamic registration refused", metadata: ["status": .string(String(response.status)), "url": .endpoint(endpoint)])
            throw HTTPErrorMapping.unexpectedStatus(response, endpoint: endpoint, what: "client registration")
        }
        let object: [String: JSONValue]
        do { object = try StrictJSONParser.parseObject(response.body) } catch {
            throw OIDCError(.malformedResponse, "The client registration answer is not a JSON object.", context: ["rule": "RFC 7591 §3.2.1"])
        }
        let members = JSONObjectReader(object, document: "The client registration answer")
        guard let clientID = try members.nonEmptyString("client_id") else {
            throw OIDCError(
                .malformedResponse, "The client registration answer has no client_id (RFC 7591 §3.2.1); nothing can log in with it.",
                context: ["rule": "RFC 7591 §3.2.1 client_id"])
        }
        // RFC 6749 Appendix A.1: client-id = *VSCHAR (printable ASCII). Stored and printed by
        // every later `oidc status`, another character could drive the terminal.
        if let bad = clientID.unicodeScalars.first(where: { $0.value < 0x20 || $0.value > 0x7E }) {
            throw OIDCError(
                .malformedResponse,
                "The client registration answer's client_id holds a character outside RFC 6749's VSCHAR (U+\(String(format: "%04X", bad.value)); only printable ASCII is allowed, Appendix A.1): the server's answer is refused.",
                context: ["rule": "RFC 6749 Appendix A.1 client_id", "parameter": "client_id"])
        }
        let redirects = try members.strings("redirect_uris") ?? [redirectURI]
        let configurationURI = try ClientConfigurationURI.accepted(
            members.endpoint("registration_client_uri"), registrationEndpoint: endpoint, issuer: issuer, logger: logger)
        let expiry = try members.seconds("client_secret_expires_at")
        let registration = ClientRegistration(
            issuer: issuer, clientID: clientID, clientSecret: try members.nonEmptyString("client_secret").map(Secret.init),
            clientSecretExpiresAt: expiry.flatMap { $0 > 0 ? Date(timeIntervalSince1970: $0) : nil },
            registrationAccessToken: try members.nonEmptyString("registration_access_token").map(Secret.init),
            registrationClientURI: configurationURI, redirectURIs: redirects)
        logger.info(
            "client registered", metadata: ["issuer": .issuer(issuer), "client_id": .untrusted(clientID), "redirect_uri": .string(redirectURI)])
        return registration
    }
}
