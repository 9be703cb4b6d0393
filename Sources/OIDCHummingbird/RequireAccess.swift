public import Hummingbird
internal import NIOCore
internal import HTTPTypes
internal import OIDC
public import OIDCResourceServer

/// Lets a request through only with an access token the kit accepts and that grants `scopes`: a
/// bearer token, or a DPoP-bound one with its proof (RFC 9449), under the server's nonces when it
/// has them. A refusal is answered exactly as the kit says: its status, the RFC 6750 / RFC 9449
/// challenges (`WWW-Authenticate`, `resource_metadata`), `DPoP-Nonce`, and a JSON body naming the
/// error. An accepted request goes on with ``AccessRequestContext/access`` set, and its answer
/// carries the kit's response headers (a new `DPoP-Nonce`).
///
/// Each decision is logged on the request's logger, as `AccessLog` words it:
/// a refusal at `info`, an accepted request at `debug`; never the token or the proof.
///
/// The URL a DPoP proof must name is the kit's (`ResourceServer.request(method:target:authority:headers:scheme:peerCertificate:)`):
/// on the server's `publicOrigin`, else on `http` and the request's one `Host`. Hummingbird's HTTP/1
/// server says `http` even under TLS: an API served over https (itself or behind a proxy) sets the
/// public origin.
///
/// ```swift
/// let router = Router(context: BasicAccessRequestContext.self)
/// router.addProtectedResourceMetadata(server)
/// router.group("orders").add(middleware: RequireAccess(server, scopes: ["orders:read"]))
///     .get { _, context in try context.verifiedAccess.subject ?? "" }
/// ```
public struct RequireAccess<Context: AccessRequestContext>: RouterMiddleware {
    /// The resource server that judges each request.
    public let server: ResourceServer
    /// What the routes behind it require of a token.
    public let requirement: AccessRequirement
    /// The scopes the routes behind it need, all of them (``requirement``'s).
    public var scopes: Set<String> { requirement.scopes }
    /// How strong and how recent the user's authentication must be (RFC 9470); `nil`: any (``requirement``'s).
    public var authentication: AuthenticationRequirement? { requirement.authentication }

    /// - Parameters:
    ///   - server: the resource server, built once for the whole API.
    ///   - scopes: the scopes the routes behind it need (all of them); none: any valid token.
    ///   - authentication: the user's authentication the routes need (RFC 9470 step-up: `acr`,
    ///     `auth_time`); `nil`: any.
    ///   - authorizationDetailTypes: a detail of each of these types the token must hold (RFC 9396).
    public init(
        _ server: ResourceServer, scopes: Set<String> = [], authentication: AuthenticationRequirement? = nil, authorizationDetailTypes: Set<String> = []
    ) {
        self.server = server
        requirement = AccessRequirement(scopes: scopes, authentication: authentication, authorizationDetailTypes: authorizationDetailTypes)
    }

    /// Verifies the request's token, then hands it on with its access, or answers the refusal.
    public func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let access: VerifiedAccess
        do {
            access = try await server.verify(
                method: request.method.rawValue, target: request.head.path ?? "", authority: request.head.authority,
                headers: OIDC.HTTPHeaders(request.headers.map { ($0.name.rawName, $0.value) }), scheme: request.head.scheme ?? "http",
                meeting: requirement, logger: context.logger)
        } catch {
            return Response(
                status: HTTPResponse.Status(code: error.status), headers: HTTPFields(error.headers, then: [.contentType: "application/json", .cacheControl: "no-store"]),
                body: ResponseBody(byteBuffer: ByteBuffer(string: error.body)))
        }
        var context = context
        context.access = access
        var response = try await next(request, context)
        // The kit's fields (a new DPoP-Nonce) replace the handler's of the same name.
        for (name, value) in access.responseHeaders {
            if let name = HTTPField.Name(name) { response.headers[name] = value }
        }
        return response
    }
}

extension HTTPFields {
    /// The kit's header fields, then `rest`.
    init(_ headers: OIDC.HTTPHeaders, then rest: HTTPFields) {
        self.init()
        for (name, value) in headers {
            if let name = HTTPField.Name(name) { append(HTTPField(name: name, value: value)) }
        }
        append(contentsOf: rest)
    }
}
