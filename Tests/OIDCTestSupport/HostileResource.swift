import Foundation
import OIDC
import OIDCTesting

/// A small hostile protected resource and authorization server on one loopback port (security
/// review 5, L1, L3, I2): its 401 names its metadata, its metadata names the `authorizationServers`
/// it is told to, its authorization server metadata (RFC 8414, at the path-inserted location) and
/// its registration answer (RFC 7591) carry what the test sets. Every request is recorded (method
/// and path), so a test shows what reached it, and what did not.
public final class HostileResource: @unchecked Sendable {
    /// What the server answers.
    public struct Script: Sendable {
        /// `authorization_servers`; `nil`: the server's own origin (its issuer).
        public var authorizationServers: [String]?
        /// The `client_id` of the registration answer.
        public var clientID = "hostile-client"
        /// `registration_client_uri` of the registration answer (with a `registration_access_token`),
        /// if any; `{origin}` stands for the server's origin.
        public var registrationClientURI: String?
        public init() {}
    }

    private let service: LoopbackHTTPService
    private let lock = NSLock()
    private var received: [String] = []
    /// `http://127.0.0.1:PORT`: the resource's origin and the issuer.
    public let origin: String
    /// The resource, `origin/mcp`.
    public var resourceURL: String { origin + "/mcp" }
    /// The port bound.
    public var port: Int { service.port }

    /// `"GET /path"` of every request, in order.
    public var requests: [String] { lock.withLock { received } }

    private init(service: LoopbackHTTPService, origin: String) {
        self.service = service
        self.origin = origin
    }

    /// Starts the server on a free loopback port.
    public static func start(_ script: Script) async throws -> HostileResource {
        let box = Box()
        let service = try await LoopbackHTTPService.start(host: "127.0.0.1", port: 0, maximumBodySize: 64 * 1024) { request in
            guard let server = box.server else { return .init(status: 503) }
            return server.answer(request, script)
        }
        let server = HostileResource(service: service, origin: "http://127.0.0.1:\(service.port)")
        box.server = server
        return server
    }

    /// Serves `body` with a running server, which is shut down afterwards whatever happens.
    public static func with<T>(_ script: Script, _ body: (HostileResource) async throws -> T) async throws -> T {
        let server = try await start(script)
        do {
            let result = try await body(server)
            try await server.service.shutdown()
            return result
        } catch {
            try? await server.service.shutdown()
            throw error
        }
    }

    private final class Box: @unchecked Sendable {
        var server: HostileResource?
    }

    private func answer(_ request: LoopbackHTTPService.Request, _ script: Script) -> LoopbackHTTPService.Response {
        lock.withLock { received.append("\(request.method) \(request.path)") }
        switch (request.method, request.path) {
        case ("GET", "/mcp"):
            return .init(status: 401, headers: [("WWW-Authenticate", "Bearer resource_metadata=\"\(origin)/.well-known/oauth-protected-resource/mcp\"")])
        case ("GET", "/.well-known/oauth-protected-resource/mcp"):
            return Self.json(["resource": resourceURL, "authorization_servers": script.authorizationServers ?? [origin]])
        case ("GET", "/.well-known/oauth-authorization-server"):
            return Self.json([
                "issuer": origin, "authorization_endpoint": origin + "/authorize", "token_endpoint": origin + "/token",
                "registration_endpoint": origin + "/register", "response_types_supported": ["code"], "code_challenge_methods_supported": ["S256"],
            ])
        case ("POST", "/register"):
            var answer: [String: Any] = ["client_id": script.clientID, "token_endpoint_auth_method": "none"]
            if let uri = script.registrationClientURI {
                answer["registration_client_uri"] = uri.replacingOccurrences(of: "{origin}", with: origin)
                answer["registration_access_token"] = "hostile-registration-access-token"
            }
            return Self.json(answer, status: 201)
        default:
            return .init(status: 404)
        }
    }

    private static func json(_ object: [String: Any], status: Int = 200) -> LoopbackHTTPService.Response {
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.withoutEscapingSlashes])) ?? Data()
        return .init(status: status, headers: [("Content-Type", "application/json")], body: Array(data))
    }
}
