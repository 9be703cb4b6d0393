import Logging
import OIDCResourceServer
import OIDCVapor
import Vapor

/// The API in Vapor: the RFC 9728 metadata, and every other path behind ``RequireAccess``,
/// answering the verified access as JSON (what `oidc resource-server` answers).
public enum ProtectedAPIVapor {
    /// The routes: what an app writes to protect its API with OIDCVapor.
    public static func routes(
        _ app: any RoutesBuilder, _ server: ResourceServer, scopes: Set<String> = [], authentication: AuthenticationRequirement? = nil, detailTypes: Set<String> = []
    ) {
        app.addProtectedResourceMetadata(server)
        let api = app.grouped(RequireAccess(server, scopes: scopes, authentication: authentication, authorizationDetailTypes: detailTypes))
        for method: HTTPMethod in [.GET, .POST, .PUT, .PATCH, .DELETE] {
            api.on(method, []) { request in accessJSON(try request.verifiedAccess) }
            api.on(method, "**") { request in accessJSON(try request.verifiedAccess) }
        }
    }

    /// An application that serves `routes` on `host`:`port` until the task is cancelled; `listening` once bound.
    public static func serve(host: String, port: Int, logger: Logger, listening: @escaping @Sendable () -> Void, routes: (any RoutesBuilder) -> Void) async throws {
        // Vapor's own command line is not this program's: it gets none.
        let app = try await Application.make(Environment(name: "production", arguments: ["protected-api-vapor"]))
        app.logger = logger
        app.http.server.configuration.hostname = host
        app.http.server.configuration.port = port
        routes(app)
        do {
            try await app.server.start(address: nil)
            listening()
            while !Task.isCancelled { try? await Task.sleep(for: .seconds(3600)) }
        } catch {
            try await app.asyncShutdown()
            throw error
        }
        await app.server.shutdown()
        try await app.asyncShutdown()
    }

    static func accessJSON(_ access: VerifiedAccess) -> Response {
        Response(status: .ok, headers: ["Content-Type": "application/json", "Cache-Control": "no-store"], body: .init(string: access.json.jsonText))
    }
}
