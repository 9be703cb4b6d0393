internal import Foundation

/// What the client's notification endpoint answers a ping-mode notification (OpenID CIBA Core 1.0
/// §10.2): a `POST` with `Authorization: Bearer <client_notification_token>` and the JSON body
/// `{"auth_req_id": "…"}`. Only ``accepted`` calls for the token request
/// (``BackchannelLogin/completeAfterNotification()``); the others trigger nothing.
public enum BackchannelNotification: Sendable, Equatable {
    /// The notification of this login: answer `204 No Content`, then make the one token request.
    case accepted
    /// No bearer token, or not this login's `client_notification_token`: answer `401` with
    /// `WWW-Authenticate: Bearer`.
    case unauthorized
    /// The right token but a body that is not `{"auth_req_id": …}` naming this login: answer `400`.
    case badRequest

    /// The HTTP status to answer with.
    public var status: Int {
        switch self {
        case .accepted: 204
        case .unauthorized: 401
        case .badRequest: 400
        }
    }

    /// The most bytes of a notification's body read: an `auth_req_id` is a few dozen.
    public static let bodyLimit = 8 * 1024

    /// The token of an `Authorization: Bearer …` field; `nil` for any other.
    package static func bearerToken(_ authorization: String?) -> Secret? {
        guard let parts = authorization?.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true), parts.count == 2,
            parts[0].lowercased() == "bearer"
        else { return nil }
        return Secret(parts[1].trimmingCharacters(in: .whitespaces))
    }

    /// The `auth_req_id` of a notification's body (`{"auth_req_id": "…"}`, at most ``bodyLimit`` bytes).
    package static func requestID(in body: [UInt8]) -> Secret? {
        guard body.count <= bodyLimit, let id = (try? StrictJSONParser.parseObject(body))?["auth_req_id"]?.stringValue, !id.isEmpty else {
            return nil
        }
        return Secret(id)
    }
}

extension BackchannelLogin {
    /// Checks a notification the client's endpoint received for this (ping-mode) login: its
    /// `Authorization` header against ``BackchannelAuthenticationRequest/clientNotificationToken``
    /// and its body's `auth_req_id` against this login's, both in constant time. A poll-mode login
    /// (no token sent) accepts none.
    ///
    /// ```swift
    /// // In the handler of the endpoint registered as backchannel_client_notification_endpoint:
    /// let verdict = login.check(notificationAuthorization: request.headers["Authorization"], body: body)
    /// respond(verdict.status)
    /// if verdict == .accepted { kept = try await login.completeAfterNotification() }
    /// ```
    public func check(notificationAuthorization authorization: String?, body: [UInt8]) -> BackchannelNotification {
        guard let expected = request.clientNotificationToken, BackchannelNotification.bearerToken(authorization) == expected else {
            return .unauthorized
        }
        guard BackchannelNotification.requestID(in: body) == authentication.requestID else { return .badRequest }
        return .accepted
    }
}

extension BackchannelAuthenticationRequest {
    /// A new random `client_notification_token` (256 bits) for a ping-mode request.
    public static func newNotificationToken() throws(OIDCError) -> Secret {
        Secret(try RandomToken.generate())
    }
}
