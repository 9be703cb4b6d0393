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
    let publicOrigin: URL?

    /// - Parameters:
    ///   - server: the resource server, built once for the whole API.
    ///   - scopes: the scopes this route needs (all of them); none: any valid token.
    ///   - publicOrigin: where clients reach the API (`https://api.example`), when a proxy or a
    ///     TLS terminator stands in front: a DPoP proof names the URL the client used. `nil`: the
    ///     request's own scheme and `Host`.
    public init(_ server: ResourceServer, scopes: Set<String> = [], publicOrigin: URL? = nil) {
        self.server = server
        self.scopes = scopes
        self.publicOrigin = publicOrigin
    }

    public func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard let url = Self.addressedURL(of: request, publicOrigin: publicOrigin) else {
            return Response(status: .badRequest)
        }
        let headers = OIDC.HTTPHeaders(request.headers.map { ($0.name.rawName, $0.value) })
        let access: VerifiedAccess
        do {
            access = try await server.verify(ResourceRequest(method: request.method.rawValue, url: url, headers: headers), requiring: scopes)
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

    /// The URL as the client addressed it (RFC 9449 §4.3 compares a proof's `htu` with it): the
    /// public origin when configured, else the request's scheme and its one `Host`; then the
    /// request target's path and query as received. `nil` for a request without a `Host`, with
    /// two, or with one that is not a plain `host[:port]`.
    static func addressedURL(of request: Request, publicOrigin: URL?) -> URL? {
        guard let path = request.head.path, path.hasPrefix("/") else { return nil }
        if let publicOrigin {
            return URL(string: publicOrigin.absoluteString.trimmingSuffix("/") + path)
        }
        // Hummingbird's HTTP/1 server moves the first Host field into `authority` (a second one
        // stays among the fields: RFC 9112 §3.2 answers 400), and says `http` even under its own
        // TLS: an API that terminates TLS itself sets `publicOrigin`.
        guard let host = request.head.authority, !host.isEmpty, host.utf8.allSatisfy(isAuthorityByte),
            request.headers[HTTPField.Name("Host")!] == nil
        else { return nil }
        return URL(string: "\(request.head.scheme ?? "http")://\(host)\(path)")
    }

    /// A `Host` of letters, digits, `-`, `.`, and `:`/`[`/`]` for ports and IPv6: nothing that
    /// could move the path or the user info of the URL built from it.
    private static func isAuthorityByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
            UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: ":"), UInt8(ascii: "["), UInt8(ascii: "]"):
            true
        default: false
        }
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

extension String {
    fileprivate func trimmingSuffix(_ suffix: String) -> Substring {
        hasSuffix(suffix) ? dropLast(suffix.count) : self[...]
    }
}
