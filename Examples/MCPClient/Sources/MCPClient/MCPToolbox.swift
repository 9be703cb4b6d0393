import Foundation
import MCP
import OIDC

/// An MCP client session over streamable HTTP, authorized by an ``OIDCAuthorizer``: connects
/// (`initialize`), lists the server's tools, calls them.
public struct MCPToolbox: Sendable {
    /// The MCP server's endpoint.
    public let endpoint: URL
    /// The authorizer of every request.
    public let authorizer: OIDCAuthorizer

    public init(endpoint: URL, session: AuthenticatedSession) {
        self.endpoint = endpoint
        self.authorizer = OIDCAuthorizer(session: session)
    }

    /// Connects, runs `body` with the connected client, disconnects. An MCP error caused by the
    /// authorization is rethrown as the ``MCPAuthorizationError`` it was.
    public func withClient<Result: Sendable>(_ body: (Client) async throws -> Result) async throws -> Result {
        let client = Client(name: "swift-oidc-mcp-client", version: "1.0")
        do {
            _ = try await client.connect(transport: authorizer.transport(to: endpoint))
            let result = try await body(client)
            await client.disconnect()
            return result
        } catch {
            await client.disconnect()
            if let problem = authorizer.problem { throw MCPAuthorizationError(problem: problem) }
            throw error
        }
    }

    /// The names and descriptions of the server's tools, every page.
    public func listTools() async throws -> [Tool] {
        try await withClient { client in
            var tools: [Tool] = []
            var cursor: String?
            repeat {
                let page = try await client.listTools(cursor: cursor)
                tools += page.tools
                cursor = page.nextCursor
            } while cursor != nil && tools.count < 10_000
            return tools
        }
    }

    /// Calls the tool `name`; its text content, joined.
    public func callTool(_ name: String, arguments: [String: Value]? = nil) async throws -> String {
        try await withClient { client in
            let result = try await client.callTool(name: name, arguments: arguments)
            let text = result.content.compactMap { content -> String? in
                if case .text(let text, _, _) = content { return text }
                return nil
            }
            return text.joined(separator: "\n")
        }
    }
}

/// An MCP request the authorizer could not authorize; ``problem`` says why.
public struct MCPAuthorizationError: Error, CustomStringConvertible {
    public let problem: MCPAuthorizationProblem
    public var description: String { problem.description }
}
