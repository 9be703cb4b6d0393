internal import NIOCore
internal import NIOHTTP1
internal import OIDC
public import OIDCResourceServer
public import Vapor

/// The RFC 9728 metadata route, on a Vapor application or route group.
extension RoutesBuilder {
    /// Serves `server`'s RFC 9728 metadata at its well-known path (`/.well-known/oauth-protected-resource`,
    /// with the resource's path appended, RFC 9728 §3.1), unprotected: the document every challenge
    /// names in `resource_metadata`, from which a client finds the authorization server. Another
    /// method there is `405` with `Allow: GET`.
    @discardableResult
    public func addProtectedResourceMetadata(_ server: ResourceServer) -> Route {
        let metadata = server.metadata
        let body = metadata.json
        let path = metadata.wellKnownPath.split(separator: "/").map { PathComponent.constant(String($0)) }
        for method: HTTPMethod in [.POST, .PUT, .PATCH, .DELETE] {
            on(method, path) { _ in Response(status: .methodNotAllowed, headers: ["Allow": "GET"]) }
        }
        return get(path) { _ in
            Response(status: .ok, headers: ["Content-Type": "application/json"], body: .init(buffer: ByteBuffer(bytes: body)))
        }
    }
}
