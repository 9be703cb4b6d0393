public import Hummingbird
internal import NIOCore
internal import HTTPTypes
internal import OIDC
public import OIDCResourceServer

/// The RFC 9728 metadata route, on any Hummingbird router or route group.
extension RouterMethods {
    /// Serves `server`'s RFC 9728 metadata at its well-known path (`/.well-known/oauth-protected-resource`,
    /// with the resource's path appended, RFC 9728 §3.1), unprotected: the document every challenge
    /// names in `resource_metadata`, from which a client finds the authorization server. Another
    /// method there is `405` with `Allow: GET`.
    @discardableResult
    public func addProtectedResourceMetadata(_ server: ResourceServer) -> Self {
        let metadata = server.metadata
        let body = metadata.json
        let path = RouterPath(metadata.wellKnownPath)
        for method: HTTPRequest.Method in [.post, .put, .patch, .delete] {
            on(path, method: method) { _, _ in Response(status: .methodNotAllowed, headers: [.allow: "GET"]) }
        }
        return get(path) { _, _ in
            Response(
                status: .ok, headers: [.contentType: "application/json"],
                body: ResponseBody(byteBuffer: ByteBuffer(bytes: body)))
        }
    }
}
