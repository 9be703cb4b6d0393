public import Foundation
public import OIDC

/// The receiving end of OIDC Back-Channel Logout 1.0 (§2.5, §2.8), for any HTTP framework: give
/// it the body of the provider's `POST` to your `backchannel_logout_uri`, and it says what to do
/// and what to answer.
///
/// ```swift
/// let endpoint = BackChannelLogoutEndpoint(verifier: verifier, keys: jwksCache)
/// // in the route of POST /backchannel-logout:
/// let result = await endpoint.handle(contentType: request.headers["Content-Type"], body: bodyBytes, deletingFrom: tokenStore)
/// return Response(status: result.response.status, headers: result.response.headers, body: result.response.body)
/// ```
///
/// The body must be `application/x-www-form-urlencoded` with exactly one `logout_token` (other
/// parameters are ignored, as §2.5 allows extensions). A verified token answers `200` with
/// `Cache-Control: no-store` and an empty body; anything refused answers `400` with
/// `Cache-Control: no-store` and a JSON body `{"error": "invalid_request", "error_description": …}`
/// (§2.8) that names the rule, never the token.
public struct BackChannelLogoutEndpoint: Sendable {
    /// What the endpoint answers.
    public struct Response: Sendable, Equatable {
        /// `200` or `400`.
        public let status: Int
        /// `Cache-Control: no-store`, and `Content-Type: application/json` with a body.
        public let headers: [String: String]
        /// Empty for `200`; the JSON error object for `400`.
        public let body: [UInt8]
    }

    /// What the request asks, once checked.
    public enum Outcome: Sendable {
        /// Log out what the verified token names: ``LogoutToken/selector(clientID:)``.
        case logout(LogoutToken)
        /// The request was refused for this rule; nothing is to be done.
        case refused(LogoutTokenError)
    }

    /// What to do and what to answer.
    public struct Result: Sendable {
        /// What to do.
        public let outcome: Outcome
        /// What to answer.
        public let response: Response
        /// How many logins ``BackChannelLogoutEndpoint/handle(contentType:body:deletingFrom:now:)``
        /// deleted; `nil` from ``BackChannelLogoutEndpoint/handle(contentType:body:now:)``.
        public let deletedLogins: Int?
    }

    /// Checks the tokens (and records their `jti`s).
    public let verifier: LogoutTokenVerifier
    /// The issuer's keys.
    public let keys: JWKSCache
    /// The longest body read: a token of ``LogoutTokenVerifier/maximumTokenLength`` bytes,
    /// percent-encoded, with room for a few other parameters.
    public var maximumBodyLength: Int { verifier.maximumTokenLength * 3 + 4096 }

    /// An endpoint that checks tokens with `verifier` and the issuer's keys from `keys`.
    public init(verifier: LogoutTokenVerifier, keys: JWKSCache) {
        self.verifier = verifier
        self.keys = keys
    }

    /// Checks the request and says what to do; deleting the logins is the caller's.
    ///
    /// - Parameters:
    ///   - contentType: The request's `Content-Type` (parameters such as `charset` allowed).
    ///   - body: The request's body.
    ///   - now: The time the token is checked at.
    public func handle(contentType: String?, body: [UInt8], now: Date = Date()) async -> Result {
        do {
            let token = try readToken(contentType: contentType, body: body)
            let verified = try await verifier.verify(token, keys: keys, now: now)
            return Result(outcome: .logout(verified), response: Self.success, deletedLogins: nil)
        } catch {
            return Result(outcome: .refused(error), response: Self.failure(error.description), deletedLogins: nil)
        }
    }

    /// Checks the request and, when the token is good, deletes the logins it names from `store`
    /// (`TokenStore.deleteLogins(_:)` with ``LogoutToken/selector(clientID:)``). When the
    /// store fails, the answer is `400` (§2.8: the logout failed) and the token's `jti` is
    /// released from the replay store, so that the provider's retry of the same token is taken
    /// (with a replay store that can forget: ``ReplayStore/release(_:)``).
    public func handle(contentType: String?, body: [UInt8], deletingFrom store: any TokenStore, now: Date = Date()) async -> Result {
        let result = await handle(contentType: contentType, body: body, now: now)
        guard case .logout(let token) = result.outcome else { return result }
        do {
            let deleted = try await store.deleteLogins(token.selector(clientID: verifier.clientID))
            return Result(outcome: result.outcome, response: result.response, deletedLogins: deleted)
        } catch {
            await verifier.release(token)
            let reason = (error as? OIDCError).map { "\($0.code)" } ?? "\(type(of: error))"
            return Result(
                outcome: result.outcome,
                response: Self.failure("The logout token was valid, but the logins could not be deleted (\(reason))."),
                deletedLogins: nil)
        }
    }

    /// The one `logout_token` of a form body.
    private func readToken(contentType: String?, body: [UInt8]) throws(LogoutTokenError) -> String {
        let media = contentType?.split(separator: ";").first?.trimmingCharacters(in: .whitespaces).lowercased()
        guard media == "application/x-www-form-urlencoded" else {
            throw LogoutTokenError(.missingToken, "The request's body must be application/x-www-form-urlencoded (§2.5).")
        }
        guard body.count <= maximumBodyLength else {
            throw LogoutTokenError(.malformed, "The request's body is longer than \(maximumBodyLength) bytes.")
        }
        guard let text = String(validating: body, as: UTF8.self) else {
            throw LogoutTokenError(.missingToken, "The request's body is not UTF-8 text.")
        }
        let parameters: [OAuthParameter]
        do { parameters = try FormURLEncoding.decode(text, allowDuplicates: true) } catch {
            throw LogoutTokenError(.missingToken, "The request's body is not a valid form (\(error.code)).")
        }
        let tokens = parameters.filter { $0.name == "logout_token" }
        guard tokens.count == 1, let token = tokens.first?.value, !token.isEmpty else {
            throw LogoutTokenError(
                .missingToken, tokens.isEmpty ? "The request carries no logout_token (§2.5)." : "The request carries \(tokens.count) logout_token parameters, or an empty one; exactly one is required.")
        }
        return token
    }

    static let success = Response(status: 200, headers: ["Cache-Control": "no-store"], body: [])

    static func failure(_ description: String) -> Response {
        let object = ["error": "invalid_request", "error_description": description]
        let body = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])).map(Array.init) ?? []
        return Response(status: 400, headers: ["Cache-Control": "no-store", "Content-Type": "application/json"], body: body)
    }
}
