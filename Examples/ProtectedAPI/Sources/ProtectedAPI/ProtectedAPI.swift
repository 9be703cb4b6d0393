import Hummingbird
import Logging
import OIDCHummingbird
import ServiceLifecycle
import OIDCResourceServer

/// The API: the RFC 9728 metadata, and every other path behind ``RequireAccess``, answering the
/// verified access as JSON (what `oidc resource-server` answers).
public enum ProtectedAPI {
    /// The routes: what an app writes to protect its API with OIDCHummingbird.
    public static func router(
        _ server: ResourceServer, scopes: Set<String> = [], authentication: AuthenticationRequirement? = nil, detailTypes: Set<String> = []
    ) -> Router<BasicAccessRequestContext> {
        let router = Router(context: BasicAccessRequestContext.self)
        router.addProtectedResourceMetadata(server)
        let api = router.group().add(middleware: RequireAccess(server, scopes: scopes, authentication: authentication, authorizationDetailTypes: detailTypes))
        for method: HTTPRequest.Method in [.get, .post, .put, .patch, .delete] {
            for path in ["/", "**"] { api.on(RouterPath(path), method: method) { _, context in AccessJSON(access: try context.verifiedAccess) } }
        }
        return router
    }

    /// Serves `router` on `host`:`port` until the task is cancelled, then stops gracefully (the
    /// requests under way are answered); `listening` once bound.
    public static func serve(_ router: Router<BasicAccessRequestContext>, host: String, port: Int, logger: Logger, listening: @escaping @Sendable () -> Void) async throws {
        let app = Application(
            router: router, configuration: .init(address: .hostname(host, port: port)),
            onServerRunning: { _ in listening() }, logger: logger)
        let services = ServiceGroup(configuration: .init(services: [app], gracefulShutdownSignals: [], logger: logger))
        // Cancelled, the services stop gracefully: run in a task of their own, not cancelled with ours.
        let running = Task { try await services.run() }
        try await withTaskCancellationHandler {
            try await running.value
        } onCancel: {
            Task { await services.triggerGracefulShutdown() }
        }
    }
}

/// The access as JSON, `Cache-Control: no-store`.
struct AccessJSON: ResponseGenerator {
    let access: VerifiedAccess

    func response(from request: Request, context: some RequestContext) throws -> Response {
        Response(
            status: .ok, headers: [.contentType: "application/json", .cacheControl: "no-store"],
            body: ResponseBody(byteBuffer: ByteBuffer(string: access.json.jsonText)))
    }
}
