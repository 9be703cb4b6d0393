import Foundation
import Hummingbird
import Logging
import NIOCore
import OIDCHummingbird

/// `router` served on 127.0.0.1 (`port`, or any free port) while `body` runs with its base URL, then stopped.
func serve<Context: RequestContext>(_ router: Router<Context>, port: Int = 0, _ body: (String) async throws -> Void) async throws where Context.Source == ApplicationRequestContextSource {
    let (ports, found) = AsyncStream.makeStream(of: Int.self)
    var logger = Logger(label: "oidc-hummingbird-test")
    logger.logLevel = .critical  // a stop says "Waiting on child channel: CancellationError()" at error level
    let app = Application(
        router: router, configuration: .init(address: .hostname("127.0.0.1", port: port)),
        onServerRunning: { channel in
            if let port = channel.localAddress?.port { found.yield(port) }
            found.finish()
        }, logger: logger)
    let server = Task {
        defer { found.finish() }  // a failed bind must not leave the wait below hanging
        try await app.run()
    }
    defer { server.cancel() }
    var port: Int?
    for await bound in ports { port = bound }
    guard let port else {
        try await server.value
        throw CancellationError()
    }
    try await body("http://127.0.0.1:\(port)")
    server.cancel()
    _ = await server.result
}
