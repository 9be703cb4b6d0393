import Foundation
import HTTPTypes
import Hummingbird
import OIDC
import OIDCResourceServer

/// A request context that carries what ``RequireAccess`` verified, for the handlers behind it.
public protocol AccessRequestContext: RequestContext {
    /// The verified access token (subject, client, scopes, binding); set by ``RequireAccess``.
    var access: VerifiedAccess? { get set }
}

/// The API's request context: Hummingbird's basic one, plus the verified access.
public struct APIRequestContext: AccessRequestContext {
    public var coreContext: CoreRequestContextStorage
    public var access: VerifiedAccess?

    public init(source: Source) {
        coreContext = .init(source: source)
    }
}

/// Lets a request through only with an access token the kit accepts and that grants `scopes`:
/// a bearer token, or a DPoP-bound one with its proof. A refusal is answered exactly as the kit
/// says (status, `WWW-Authenticate` and `DPoP-Nonce` headers, a JSON body naming the error); an
/// accepted request goes on with ``AccessRequestContext/access`` set, and its response carries the
/// kit's `DPoP-Nonce` when the server's nonce moved on.
public struct RequireAccess<Context: AccessRequestContext>: RouterMiddleware {
    let server: ResourceServer
    let scopes: Set<String>

    /// - Parameters:
    ///   - server: the resource server, built once for the whole API. Behind a proxy or a TLS
    ///     terminator, its configuration's `publicOrigin` names where clients reach the API.
    ///   - scopes: the scopes this route needs (all of them); none: any valid token.
    public init(_ server: ResourceServer, scopes: Set<String> = []) {
        self.server = server
        self.scopes = scopes
    }

    public func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let access: VerifiedAccess
        do {
            // The kit builds the URL the client addressed (a proof's htu) from the target, the one
            // Host (Hummingbird's HTTP/1 server moves the first into `authority`) and the public
            // origin; it never reads X-Forwarded-*.
            let checked = try server.request(
                method: request.method.rawValue, target: request.head.path ?? "", authority: request.head.authority,
                headers: OIDC.HTTPHeaders(request.headers.map { ($0.name.rawName, $0.value) }), scheme: request.head.scheme ?? "http")
            access = try await server.verify(checked, requiring: scopes)
        } catch {
            return Response(
                status: .init(code: error.status), headers: Self.fields(error.headers, [.contentType: "application/json"]),
                body: .init(byteBuffer: ByteBuffer(string: error.body))
            )
        }
        var context = context
        context.access = access
        var response = try await next(request, context)
        response.headers = Self.fields(access.responseHeaders, response.headers)
        return response
    }

    /// The kit's header fields, then `rest`.
    static func fields(_ headers: OIDC.HTTPHeaders, _ rest: HTTPFields) -> HTTPFields {
        var fields = HTTPFields()
        for (name, value) in headers {
            if let name = HTTPField.Name(name) { fields.append(HTTPField(name: name, value: value)) }
        }
        fields.append(contentsOf: rest)
        return fields
    }
}
