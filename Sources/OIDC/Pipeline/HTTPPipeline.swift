internal import Foundation

extension ArraySlice where Element == any HTTPStage {
    /// `request`, the call `call`, through these stages in order (each sees it as it leaves), then `last`.
    func run(
        _ request: HTTPRequest, call: HTTPCall, then last: @escaping HTTPStage.Next
    ) async throws(OIDCError) -> HTTPResponse {
        guard let stage = first else { return try await last(request) }
        let rest = dropFirst()
        return try await stage.intercept(request, call: call) { (next: HTTPRequest) async throws(OIDCError) -> HTTPResponse in
            try await rest.run(next, call: call, then: last)
        }
    }
}
