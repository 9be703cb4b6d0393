/// A loopback HTTP/1.1 service for the `oidc` command's own local servers (`oidc resource-server`):
/// the test provider's NIO plumbing (``HTTPServer``: loopback bind, bounded headers and bodies,
/// keep-alive, a clean shutdown) with plain request and response values, so the command needs no
/// third HTTP server and no NIO import of its own. Package access: not part of OIDCTesting's API.
package final class LoopbackHTTPService: Sendable {
    /// One request: method, target split into path and query, header fields as received.
    package struct Request: Sendable {
        package var method: String
        /// The path of the request target, without the query (as sent: not decoded).
        package var path: String
        /// The raw query (after `?`), if any.
        package var query: String?
        /// Header fields in the order received, names as sent.
        package var headers: [(name: String, value: String)]
        /// The body (at most the service's `maximumBodySize` bytes).
        package var body: [UInt8] = []

        /// The first field named `name` (case-insensitively).
        package func header(_ name: String) -> String? {
            headers.first { $0.name.lowercased() == name.lowercased() }?.value
        }
    }

    /// One response; `Content-Length` and `Connection` are set by the server.
    package struct Response: Sendable {
        package var status: Int
        package var headers: [(name: String, value: String)]
        package var body: [UInt8]

        package init(status: Int, headers: [(name: String, value: String)] = [], body: [UInt8] = []) {
            self.status = status
            self.headers = headers
            self.body = body
        }
    }

    /// The port bound (the one asked for, or the one the system chose for port 0).
    package let port: Int
    private let server: HTTPServer

    private init(server: HTTPServer) {
        self.server = server
        port = server.port
    }

    /// Binds `host:port` and serves every request through `handler`.
    ///
    /// - Parameters:
    ///   - host: a loopback IP literal (`127.0.0.1` or `::1`); the caller checks it.
    ///   - maximumBodySize: larger bodies are answered `413` and the connection closed.
    ///   - maximumHeaderSize: header names and values together; larger ones are answered `431`.
    ///   - connections: how many connections at once, and how long each may wait for a whole request.
    /// - Throws: ``OIDC/OIDCError`` naming the address when it cannot be bound (in use, privileged),
    ///   or (`invalidArgument`) for `connections` that ``HTTPConnectionLimits/validate()`` refuses.
    package static func start(
        host: String, port: Int, maximumBodySize: Int, maximumHeaderSize: Int = 16 * 1024,
        connections: HTTPConnectionLimits = HTTPConnectionLimits(),
        handler: @escaping @Sendable (Request) async -> Response
    ) async throws -> LoopbackHTTPService {
        let limits = HTTPServer.Limits(maximumBodySize: maximumBodySize, maximumHeaderSize: maximumHeaderSize, connections: connections)
        let server = try await HTTPServer.start(host: host, port: port, limits: limits) { request in
            let answer = await handler(Request(method: request.method, path: request.path, query: request.query, headers: request.headers, body: request.body))
            return ProviderResponse(status: answer.status, headers: answer.headers, body: answer.body)
        }
        return LoopbackHTTPService(server: server)
    }

    /// Stops accepting, ends open connections, then the event loop; again does nothing.
    package func shutdown() async throws { try await server.shutdown() }
}
