import Foundation
import OIDC

extension MCPLogin {
    /// Runs `body` with a toolbox over this login; when the server answers 403 `insufficient_scope`
    /// (the tool needs more than was granted), logs in once more asking for the scopes granted and
    /// those the server named, then runs `body` again, once: a second refusal is thrown, so a
    /// server that keeps refusing never makes the client loop.
    public func withStepUp<Result: Sendable>(
        browser: any BrowserLauncher, show: @escaping @Sendable (URL) -> Void = { _ in }, _ body: (MCPToolbox) async throws -> Result
    ) async throws -> Result {
        do {
            return try await body(MCPToolbox(endpoint: resource, session: session()))
        } catch let error as MCPAuthorizationError {
            guard case .insufficientScope(let scopes) = error.problem else { throw error }
            try await logIn(scopes: scopes, browser: browser, show: show)
            return try await body(MCPToolbox(endpoint: resource, session: session()))
        }
    }
}
