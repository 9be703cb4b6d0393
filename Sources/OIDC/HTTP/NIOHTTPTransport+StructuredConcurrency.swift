public import Logging

/// Runs `body` with a new transport and shuts it down afterwards, whether `body` returns or throws.
///
/// - Parameters:
///   - configuration: trust, pins, user agent and idle connections.
///   - logger: where the transport logs its requests; `nil` (the default) logs nothing.
///   - body: what to do with the transport.
public func withNIOHTTPTransport<T>(
    configuration: NIOHTTPTransport.Configuration = .init(),
    logger: Logger? = nil,
    _ body: (NIOHTTPTransport) async throws -> T
) async throws -> T {
    let transport = NIOHTTPTransport(configuration: configuration, logger: logger)
    let result: T
    do {
        result = try await body(transport)
    } catch {
        try? await transport.shutdown()
        throw error
    }
    try await transport.shutdown()
    return result
}
