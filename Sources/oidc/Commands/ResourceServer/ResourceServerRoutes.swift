import Foundation
import OIDC
import OIDCResourceServer
import OIDCTesting

/// What `oidc resource-server` answers: its RFC 9728 metadata at
/// `/.well-known/oauth-protected-resource`, and on every other path the protected API, whose
/// answer is the verified access as JSON or the kit's refusal, with one line on stderr for each.
final class ResourceServerRoutes: Sendable {
    /// The kit, set once the port (so the URL that proofs name) is known.
    private let server = Box<ResourceServer>()
    /// `--require-scope`: every protected path requires all of them.
    private let requiredScopes: Set<String>
    /// `--require-acr` and `--max-age` (RFC 9470): what every protected path requires of the user's authentication.
    private let authentication: AuthenticationRequirement?

    /// `--require-detail-type` (RFC 9396): a rich authorization detail of each type every protected path requires.
    private let detailTypes: Set<String>

    init(requiredScopes: [String], authentication: AuthenticationRequirement? = nil, detailTypes: [String] = []) {
        self.requiredScopes = Set(requiredScopes)
        self.authentication = authentication
        self.detailTypes = Set(detailTypes)
    }

    /// From now on, requests are checked by a server built from `configuration`.
    ///
    /// - Throws: ``OIDC/OIDCError`` (`invalidArgument`) when the kit refuses the configuration.
    func serve(_ configuration: ResourceServer.Configuration) throws {
        server.set(try ResourceServer(configuration))
    }

    func answer(_ request: LoopbackHTTPService.Request) async -> LoopbackHTTPService.Response {
        guard let server = server.value else { return .text("Starting; try again", status: 503) }
        let metadata = server.metadata
        if request.path == metadata.wellKnownPath {
            guard request.method == "GET" else { return .text("Method Not Allowed", status: 405, extraHeaders: [("Allow", "GET")]) }
            return LoopbackHTTPService.Response(status: 200, headers: [("Content-Type", "application/json")], body: metadata.json)
        }
        do {
            // The kit's one rule for the URL a proof names: this server's public origin (its base
            // URL), the target's path and query; one Host at most.
            let checked = try server.request(
                method: request.method, target: request.path + (request.query.map { "?" + $0 } ?? ""),
                headers: HTTPHeaders(request.headers.map { ($0.name, $0.value) }))
            let access = try await server.verify(checked, requiring: requiredScopes, authentication: authentication, authorizationDetailTypes: detailTypes)
            Console.error("oidc: " + AccessLog.accepted(access, method: request.method, path: request.path))
            return LoopbackHTTPService.Response(
                status: 200, headers: [("Content-Type", "application/json"), ("Cache-Control", "no-store")] + access.responseHeaders.map { ($0.name, $0.value) },
                body: Array(access.json.jsonText.utf8))
        } catch {
            Console.error("oidc: " + AccessLog.refused(error, method: request.method, path: request.path))
            return LoopbackHTTPService.Response(
                status: error.status,
                headers: [("Content-Type", "application/json"), ("Cache-Control", "no-store")] + error.headers.map { ($0.name, $0.value) },
                body: Array(error.body.utf8)
            )
        }
    }

    /// A value set once, read by every request.
    private final class Box<Value: Sendable>: @unchecked Sendable {
        private let lock = NSLock()
        private var stored: Value?
        var value: Value? { lock.withLock { stored } }
        func set(_ value: Value) { lock.withLock { stored = value } }
    }
}

extension LoopbackHTTPService.Response {
    static func text(_ text: String, status: Int, extraHeaders: [(name: String, value: String)] = []) -> Self {
        Self(status: status, headers: [("Content-Type", "text/plain; charset=utf-8"), ("Cache-Control", "no-store")] + extraHeaders, body: Array(text.utf8))
    }
}
