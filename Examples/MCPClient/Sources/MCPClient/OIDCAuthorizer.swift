import Foundation
import MCP
import OIDC

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The MCP swift-sdk's `HTTPClientAuthorizer`, backed by swift-oidc: the session's
/// `ResourceCredential` for each request, so that the MCP transport gets what the session gives
/// every other API call, decided by the library, not here.
///
/// - The login is the session's: kept in its store (a `FileKeychain` keeps it across runs), refreshed
///   before it expires and under the store's lock; a refresh the provider rejects logs the user out.
/// - A DPoP-bound login is sent as `Authorization: DPoP …` with a fresh proof per request
///   (``sign(_:)``, the transport's `requestModifier`); a 401 `use_dpop_nonce` gets one retry with
///   the server's nonce, any other 401 one refresh (``maxAuthorizationAttempts``: never a loop).
/// - A 403 `insufficient_scope` is not retried: ``problem`` names the scopes for a step-up login.
/// - The token goes only where the session's `HostAllowlist` allows (``validateEndpointSecurity(for:)``).
///
/// `authorizationHeader(for:)` and `sign(_:)` are synchronous and may run on another request's
/// task: the credential is kept under a lock.
public final class OIDCAuthorizer: HTTPClientAuthorizer, @unchecked Sendable {
    public let session: AuthenticatedSession
    public let maxAuthorizationAttempts = 2
    private let lock = NSLock()
    private var credential: ResourceCredential?
    private var lastProblem: MCPAuthorizationProblem?

    public init(session: AuthenticatedSession) { self.session = session }

    /// Why the last request could not be authorized (the transport says only "failed"); `nil` after one that was.
    public var problem: MCPAuthorizationProblem? { lock.withLock { lastProblem } }

    /// A transport to `endpoint` authorized by this authorizer (plain JSON answers: no SSE on Linux).
    public func transport(to endpoint: URL) -> HTTPClientTransport {
        HTTPClientTransport(endpoint: endpoint, streaming: false, authorizer: self, requestModifier: { [self] in sign($0) })
    }

    public func validateEndpointSecurity(for endpoint: URL) throws { try session.allowlist.check(endpoint) }

    public func authorizationHeader(for endpoint: URL) -> String? {
        try? lock.withLock { credential }?.headers(method: "POST", url: endpoint)["Authorization"]
    }

    public func prepareAuthorization(for endpoint: URL, session _: URLSession) async throws {
        try await use { try await session.credential(for: endpoint) }
    }

    public func handleChallenge(statusCode: Int, headers: [String: String], endpoint: URL, operationKey _: String?, session _: URLSession) async throws -> Bool {
        let response = OIDC.HTTPResponse(status: statusCode, headers: OIDC.HTTPHeaders(headers.map { ($0.key, $0.value) }))
        guard let current = lock.withLock({ credential }) else { return false }
        if statusCode == 401, current.nonceChallenged(response, from: endpoint) { return true }
        if statusCode == 401 { try await use { try await session.credential(afterRefusalOf: current, at: endpoint) } }
        if let scopes = current.stepUpScopes(after: response, from: endpoint) { lock.withLock { lastProblem = .insufficientScope(scopes) } }
        return statusCode == 401
    }

    /// `request` with a fresh DPoP proof (of its method and URL, with the server's nonce) for a DPoP-bound login.
    public func sign(_ request: URLRequest) -> URLRequest {
        guard let credential = lock.withLock({ credential }), let url = request.url,
            let proof = try? credential.headers(method: request.httpMethod ?? "GET", url: url)["DPoP"]
        else { return request }
        var signed = request
        signed.setValue(proof, forHTTPHeaderField: "DPoP")
        return signed
    }

    /// Keeps the `fresh` credential, or the reason there is none.
    private func use(_ fresh: () async throws -> ResourceCredential) async throws {
        do { let next = try await fresh(); lock.withLock { (credential, lastProblem) = (next, nil) } }
        catch { lock.withLock { lastProblem = .notAuthorized(error) }; throw error }
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
