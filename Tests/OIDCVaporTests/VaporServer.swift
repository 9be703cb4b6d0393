import Logging
import NIOCore
import OIDCVapor
import Vapor

/// An application whose routes `routes` adds, served on 127.0.0.1 (any free port) while `body`
/// runs with its base URL, then shut down.
func serve(_ routes: (Application) throws -> Void, _ body: (String) async throws -> Void) async throws {
    // No command line of its own: the test runner's arguments are not Vapor's.
    let app = try await Application.make(Environment(name: "testing", arguments: ["vapor"]))
    app.logger.logLevel = .critical
    app.http.server.configuration.hostname = "127.0.0.1"
    app.http.server.configuration.port = 0
    do {
        try routes(app)
        try await app.server.start(address: nil)
        guard let port = app.http.server.shared.localAddress?.port else { throw Abort(.internalServerError, reason: "no port") }
        try await body("http://127.0.0.1:\(port)")
    } catch {
        await app.server.shutdown()
        try await app.asyncShutdown()
        throw error
    }
    await app.server.shutdown()
    try await app.asyncShutdown()
}
