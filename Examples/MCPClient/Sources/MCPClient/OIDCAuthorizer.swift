import Foundation
import MCP
import OIDC

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The MCP swift-sdk's `HTTPClientAuthorizer`, backed by swift-oidc: the access token of a stored
/// login, through its `AuthenticatedSession`, so that the MCP transport gets what the session
/// gives every other API call.
///
/// - The login is the session's: kept in its store (a `FileKeychain` keeps it across runs), refreshed
///   before it expires and under the store's lock, so two processes never spend the same refresh
///   token; a refresh the provider rejects logs the user out.
/// - A DPoP-bound login (RFC 9449) is sent as `Authorization: DPoP …` with a fresh proof for each
///   request (``sign(_:)``, the transport's `requestModifier`), and a 401 `use_dpop_nonce` gets one
///   retry with the server's nonce, never a refresh.
/// - A 401 otherwise gets one forced refresh, then the transport retries once
///   (``maxAuthorizationAttempts``): a request never loops.
/// - A 403 `insufficient_scope` is not retried: ``problem`` says which scopes the server asked for
///   (``MCPAuthorizationProblem/insufficientScope(_:)``), for a step-up login.
/// - The token goes only to an endpoint the session's `HostAllowlist` allows, over https or plain
///   http to a loopback address (``validateEndpointSecurity(for:)``).
///
/// The transport (an actor) serializes its calls to one authorizer; the state here is under a lock
/// anyway, since ``authorizationHeader(for:)`` and ``sign(_:)`` are synchronous and may be called by
/// a concurrent request's task.
public final class OIDCAuthorizer: HTTPClientAuthorizer, @unchecked Sendable {
    /// The login's session: its store, its refreshes, its allowlist.
    public let session: AuthenticatedSession
    /// One refresh (or one DPoP nonce retry), then the transport gives up on the request.
    public let maxAuthorizationAttempts = 2

    private let lock = NSLock()
    private var header: String?
    private var dpop: DPoP?
    private var lastProblem: MCPAuthorizationProblem?

    /// An authorizer for the login of `session`.
    public init(session: AuthenticatedSession) {
        self.session = session
    }

    /// Why the last request could not be authorized, when it could not: the transport reports only
    /// "Authorization flow failed" or "Access forbidden", so ask here. `nil` after a request that was.
    public var problem: MCPAuthorizationProblem? { lock.withLock { lastProblem } }

    /// A transport to `endpoint` authorized by this authorizer. Plain JSON answers, no SSE stream:
    /// the SDK reads no server-sent events on Linux.
    public func transport(to endpoint: URL) -> HTTPClientTransport {
        HTTPClientTransport(endpoint: endpoint, streaming: false, authorizer: self, requestModifier: { [self] request in sign(request) })
    }

    // MARK: HTTPClientAuthorizer

    /// https, or plain http to a loopback address (RFC 8252 §8.3), and a host the session's allowlist allows.
    public func validateEndpointSecurity(for endpoint: URL) throws {
        try session.allowlist.check(endpoint)
    }

    /// The header of the session's current tokens, as the last ``prepareAuthorization(for:session:)``
    /// or ``handleChallenge(statusCode:headers:endpoint:operationKey:session:)`` found them.
    public func authorizationHeader(for endpoint: URL) -> String? {
        lock.withLock { header }
    }

    /// Tokens valid for the session's refresh margin more, refreshed first when they are not (under
    /// the store's lock); before every request.
    public func prepareAuthorization(for endpoint: URL, session _: URLSession) async throws {
        do {
            try await useCurrentTokens(forceRefresh: false)
        } catch {
            record(.notAuthorized(error))
            throw error
        }
    }

    /// A 401: one retry with the server's DPoP nonce when it asks for one, else one forced refresh.
    /// A 403 `insufficient_scope`: no retry; ``problem`` names the scopes.
    public func handleChallenge(
        statusCode: Int, headers: [String: String], endpoint: URL, operationKey _: String?, session _: URLSession
    ) async throws -> Bool {
        let response = OIDC.HTTPResponse(status: statusCode, headers: OIDC.HTTPHeaders(headers.map { ($0.key, $0.value) }))
        switch statusCode {
        case 401:
            if let dpop = lock.withLock({ dpop }), dpop.nonceChallenged(response, to: endpoint) {
                return true
            }
            do {
                try await useCurrentTokens(forceRefresh: true)
                return true
            } catch {
                record(.notAuthorized(error))
                throw error
            }
        case 403:
            let granted = (try? await session.validTokens().scopes) ?? []
            guard let scopes = Self.stepUpScopes(response, granted: granted) else { return false }
            record(.insufficientScope(scopes))
            return false
        default:
            return false
        }
    }

    /// The scopes a step-up login asks for after `response`, a 403 whose Bearer or DPoP challenge
    /// says `insufficient_scope` (RFC 6750 §3.1): those `granted`, then those the challenge names,
    /// each once (the MCP authorization spec's union, so that nothing granted is lost); `nil` for
    /// any other answer.
    public static func stepUpScopes(_ response: OIDC.HTTPResponse, granted: [String]) -> [String]? {
        guard response.status == 403, let challenge = ResourceChallenge(response), challenge.error == "insufficient_scope" else { return nil }
        var union: [String] = []
        for scope in granted + (challenge.scopes ?? []) where !union.contains(scope) { union.append(scope) }
        return union
    }

    // MARK: DPoP

    /// `request` with a fresh DPoP proof (its method, its URL, `ath` of its access token, the
    /// server's latest nonce) when it carries a DPoP-bound token; as it is otherwise. The
    /// transport's `requestModifier` (``transport(to:)``).
    public func sign(_ request: URLRequest) -> URLRequest {
        guard let dpop = lock.withLock({ dpop }), let url = request.url,
            let authorization = request.value(forHTTPHeaderField: "Authorization"), authorization.hasPrefix("DPoP ")
        else { return request }
        let token = Secret(String(authorization.dropFirst("DPoP ".count)))
        var signed = request
        do {
            let proof = try dpop.key.proof(method: request.httpMethod ?? "GET", url: url, accessToken: token, nonce: dpop.nonces.nonce(for: url))
            signed.setValue(proof, forHTTPHeaderField: "DPoP")
        } catch {
            // Sent without a proof, the request gets the server's 401; the problem says why.
            record(.notAuthorized(error))
        }
        return signed
    }

    // MARK: State

    private func useCurrentTokens(forceRefresh: Bool) async throws {
        let tokens = try await session.validTokens(forceRefresh: forceRefresh)
        let key = try await session.login?.dpopKey
        let bound = key != nil || tokens.tokenType.caseInsensitiveCompare("DPoP") == .orderedSame
        lock.withLock {
            if bound, let key {
                if dpop?.key != key { dpop = DPoP(key: key) }
                header = "DPoP \(tokens.accessToken.revealedValue)"
            } else {
                dpop = nil
                header = "Bearer \(tokens.accessToken.revealedValue)"
            }
            lastProblem = nil
        }
    }

    private func record(_ problem: MCPAuthorizationProblem) {
        lock.withLock { lastProblem = problem }
    }
}

/// Why an MCP request could not be authorized.
public enum MCPAuthorizationProblem: Sendable, CustomStringConvertible {
    /// No usable login: nobody is logged in, the refresh was rejected (the login is over), or a
    /// transient failure (the error's category says which).
    case notAuthorized(any Error)
    /// The server answered 403 `insufficient_scope` (RFC 6750 §3.1): log in again asking for these
    /// scopes (those granted and those the server asked for).
    case insufficientScope([String])

    public var description: String {
        switch self {
        case .notAuthorized(let error): "not authorized: \(error)"
        case .insufficientScope(let scopes): "the server needs the scopes \(scopes.joined(separator: " ")): log in again asking for them"
        }
    }
}
