public import Foundation
internal import Logging

/// The provider's answer to a pushed authorization request (RFC 9126 §2.2): the `request_uri`
/// that stands for the request's parameters at the authorization endpoint, and how long it does.
public struct PushedAuthorization: Sendable, Equatable {
    /// `request_uri`: what the authorization URL carries instead of the parameters. Single use.
    public let requestURI: String
    /// `expires_in`: how many seconds the request URI is good for.
    package let expiresIn: Int
    /// When the request URI expires, by the client's clock.
    public let expiresAt: Date

    /// Reads a `201 Created` answer's body.
    ///
    /// - Parameters:
    ///   - json: the body.
    ///   - now: when the answer was received.
    /// - Throws: ``OIDCError/Code/malformedResponse`` for a body that is not a JSON object, or that
    ///   lacks a non-empty string `request_uri` or a positive whole number `expires_in` (both
    ///   REQUIRED by RFC 9126 §2.2).
    package init(responseBody json: [UInt8], now: Date) throws(OIDCError) {
        let object: [String: JSONValue]
        do { object = try StrictJSONParser.parseObject(json) } catch {
            throw OIDCError(.malformedResponse, "The pushed authorization request's answer is not a valid JSON object (\(error)).")
        }
        let members = JSONObjectReader(object, document: "The pushed authorization request's answer")
        guard let uri = try members.nonEmptyString("request_uri") else {
            throw OIDCError(.malformedResponse, "The pushed authorization request's answer has no 'request_uri' string (RFC 9126 §2.2).")
        }
        guard let seconds = try members.wholeSeconds("expires_in") else {
            throw OIDCError(
                .malformedResponse, "The pushed authorization request's answer has no 'expires_in' as a positive whole number of seconds (RFC 9126 §2.2)."
            )
        }
        requestURI = uri
        expiresIn = seconds
        expiresAt = now.addingTimeInterval(TimeInterval(seconds))
    }
}

/// When ``RelyingParty/authorizationURL(for:)`` pushes a login's parameters to the provider
/// (RFC 9126) instead of putting them in the URL.
public enum PushedAuthorizationUse: String, Sendable, CaseIterable {
    /// When the provider requires it (`require_pushed_authorization_requests`), and only then. The
    /// default.
    case whenRequired = "when-required"
    /// Always: a provider without a pushed authorization request endpoint is refused before
    /// anything is sent.
    case always
}

extension TokenClient {
    /// Pushes `request`'s parameters, or `requestObject` (its signed request object, RFC 9126 §3), to
    /// the provider's pushed authorization request endpoint (RFC 9126 §2.1), authenticated as the
    /// client as at the token endpoint; the answer's
    /// ``PushedAuthorization/requestURI`` then goes into ``AuthorizationRequest/url(requestURI:)``.
    /// Push again for every attempt: a request URI is single use.
    ///
    /// - Throws: ``OIDCError/Code/invalidArgument`` when the provider has no pushed authorization
    ///   request endpoint; what building the request's parameters throws, and
    ///   ``OIDCError/Code/reservedParameter`` for a `request_uri` or `request` among its additional
    ///   parameters (RFC 9126 §2.1); a provider error (`invalid_request`, `invalid_client`, …) as at the token
    ///   endpoint; ``OIDCError/Code/malformedResponse`` for an answer other than `201 Created` with
    ///   a JSON object with a non-empty string `request_uri` and a positive whole number
    ///   `expires_in` (RFC 9126 §2.2).
    public func pushAuthorizationRequest(_ request: AuthorizationRequest, requestObject: String? = nil) async throws(OIDCError) -> PushedAuthorization {
        let url = try endpoint(provider.pushedAuthorizationRequestEndpoint, "pushed authorization request endpoint")
        let parameters = try request.parameters()
        if let name = ["request_uri", "request"].first(where: { name in parameters.contains { $0.name == name } }) {
            throw OIDCError(
                .reservedParameter,
                name == "request"
                    ? "Give a request object as requestObject:, not as an additional parameter named 'request' (RFC 9126 §3)."
                    : "A pushed authorization request cannot carry a request_uri (RFC 9126 §2.1); remove it from the additional parameters.",
                context: ["parameter": name]
            )
        }
        // With a request object, the object carries every parameter (RFC 9126 §3).
        var form = requestObject.map { [OAuthParameter("request", $0)] } ?? parameters
        // Client authentication adds client_id where its method sends one; with HTTP Basic it is
        // sent in the form as well, as RFC 9126 §2.1's example does.
        form.removeAll { $0.name == "client_id" }
        if authentication.method == .clientSecretBasic { form.insert(OAuthParameter("client_id", clientID), at: 0) }
        let pushed = try await post(form, .pushedAuthorization, to: url, passing: { $0.status == 201 }) {
            [now] (response: HTTPResponse) throws(OIDCError) -> PushedAuthorization in
            guard response.status == 201 else {
                throw OIDCError(
                    .malformedResponse, "The pushed authorization request endpoint answered \(response.status), not 201 Created (RFC 9126 §2.2).",
                    context: ["status": String(response.status), "endpoint": url.absoluteString]
                )
            }
            return try PushedAuthorization(responseBody: response.body, now: now())
        }
        logger.debug("authorization request pushed", metadata: ["endpoint": .endpoint(url), "expires_in": .stringConvertible(pushed.expiresIn)])
        return pushed
    }
}
