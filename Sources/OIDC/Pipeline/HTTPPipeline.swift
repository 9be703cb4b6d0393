internal import Foundation

/// Stages in order, the outermost first, ending in a transport: one of the two pipelines a
/// ``TokenClient`` (the provider's) and an ``AuthenticatedSession`` (the resources') send through.
struct HTTPPipeline: Sendable {
    /// The stages, outermost first: the library's, then the user's, which see each request just
    /// before the transport, with everything the library added.
    let stages: [any HTTPStage]
    /// Sends what the innermost stage hands on.
    let transport: any HTTPTransport
    /// Timeout and size limit of every request.
    let options: HTTPRequestOptions

    /// `request`, the call `call`, through every stage to the transport and back.
    func send(_ request: HTTPRequest, call: HTTPCall) async throws(OIDCError) -> HTTPResponse {
        try await send(request, call: call, from: stages[...])
    }

    private func send(_ request: HTTPRequest, call: HTTPCall, from rest: ArraySlice<any HTTPStage>) async throws(OIDCError) -> HTTPResponse {
        guard let stage = rest.first else { return try await transport.send(request, options: options) }
        let inner = rest.dropFirst()
        return try await stage.intercept(request, call: call) { (next: HTTPRequest) async throws(OIDCError) -> HTTPResponse in
            try await self.send(next, call: call, from: inner)
        }
    }
}

/// A task-local value set around `body`, with `body`'s typed error kept.
func withTaskLocal<Value: Sendable, Result>(
    _ local: TaskLocal<Value>, _ value: Value, _ body: () async throws(OIDCError) -> Result
) async throws(OIDCError) -> Result {
    do {
        return try await local.withValue(value) { () async throws -> Result in try await body() }
    } catch let error as OIDCError { throw error } catch {
        // `body` throws only OIDCError; a cancellation is the one other error a task-local's scope could see.
        throw OIDCError(.cancelled, "Cancelled (\(type(of: error))).")
    }
}
