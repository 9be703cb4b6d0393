internal import NIOCore
internal import NIOHTTP1
internal import OIDC
public import OIDCResourceServer
public import Vapor

/// Lets a request through only with an access token the kit accepts and that grants `scopes`: a
/// bearer token, or a DPoP-bound one with its proof (RFC 9449), under the server's nonces when it
/// has them. A refusal is answered exactly as the kit says: its status, the RFC 6750 / RFC 9449
/// challenges (`WWW-Authenticate`, `resource_metadata`), `DPoP-Nonce`, and a JSON body naming the
/// error. An accepted request goes on with ``Vapor/Request/verifiedAccess`` set, and its answer
/// carries the kit's response headers (a new `DPoP-Nonce`).
///
/// The URL a DPoP proof must name is the kit's (`ResourceServer.request(method:target:authority:headers:scheme:peerCertificate:)`):
/// on the server's `publicOrigin` behind a proxy, else on this server's scheme and the request's
/// one `Host` (two `Host` fields are 400 `invalid_request`), with the request's path and query.
/// Vapor reads an absolute-form target (`GET http://other.example/me`) as a path of this server
/// (`/http://other.example/me`): never a URL on the other host.
///
/// Each decision is logged on the request's logger, as `AccessLog` words it:
/// a refusal at `info`, an accepted request at `debug`; never the token or the proof.
///
/// ```swift
/// app.addProtectedResourceMetadata(server)
/// app.grouped(RequireAccess(server, scopes: ["orders:read"]))
///     .get("orders") { request in try request.verifiedAccess.subject ?? "" }
/// ```
public struct RequireAccess: AsyncMiddleware {
    /// The resource server that judges each request.
    public let server: ResourceServer
    /// What the routes behind it require of a token.
    public let requirement: AccessRequirement

    /// - Parameters:
    ///   - server: the resource server, built once for the whole API.
    ///   - scopes: the scopes the routes behind it need (all of them); none: any valid token.
    ///   - authentication: the user's authentication the routes need (RFC 9470 step-up); `nil`: any.
    ///   - authorizationDetailTypes: a detail of each of these types the token must hold (RFC 9396).
    public init(
        _ server: ResourceServer, scopes: Set<String> = [], authentication: AuthenticationRequirement? = nil, authorizationDetailTypes: Set<String> = []
    ) {
        self.server = server
        requirement = AccessRequirement(scopes: scopes, authentication: authentication, authorizationDetailTypes: authorizationDetailTypes)
    }

    /// Verifies the request's token, then hands it on with its access, or answers the refusal.
    public func respond(to request: Request, chainingTo next: any AsyncResponder) async throws -> Response {
        let access: VerifiedAccess
        do {
            access = try await server.verify(
                method: request.method.rawValue, target: request.url.string,
                headers: OIDC.HTTPHeaders(request.headers.map { ($0.name, $0.value) }),
                scheme: request.application.http.server.configuration.tlsConfiguration == nil ? "http" : "https",
                meeting: requirement, logger: request.logger)
        } catch {
            var headers = NIOHTTP1.HTTPHeaders(error.headers.map { ($0.name, $0.value) })
            headers.add(name: "Content-Type", value: "application/json")
            headers.add(name: "Cache-Control", value: "no-store")
            return Response(status: HTTPResponseStatus(statusCode: error.status), headers: headers, body: .init(string: error.body))
        }
        request.storage[VerifiedAccessKey.self] = access
        let response = try await next.respond(to: request)
        for (name, value) in access.responseHeaders { response.headers.replaceOrAdd(name: name, value: value) }
        return response
    }
}

/// Where ``RequireAccess`` keeps the verified access on the request.
struct VerifiedAccessKey: StorageKey {
    typealias Value = VerifiedAccess
}

/// The access ``RequireAccess`` verified, on the request it let through.
extension Request {
    /// The verified access of a request that ``RequireAccess`` let through: subject, client,
    /// scopes, binding, claims.
    ///
    /// - Throws: `Abort(.internalServerError)` when no ``RequireAccess`` protects this route: a
    ///   mistake in the routes, never a client's.
    public var verifiedAccess: VerifiedAccess {
        get throws {
            guard let access = storage[VerifiedAccessKey.self] else {
                throw Abort(.internalServerError, reason: "This route reads the verified access, but no RequireAccess middleware protects it.")
            }
            return access
        }
    }

    /// The verified access, or `nil` on a route ``RequireAccess`` does not protect.
    public var access: VerifiedAccess? { storage[VerifiedAccessKey.self] }
}
