// swift-tools-version:6.1
// An MCP client (the official MCP swift-sdk) whose streamable-HTTP transport is authorized by
// swift-oidc: the SDK's HTTPClientAuthorizer backed by a relying party and a stored login (kept in
// a FileKeychain, refreshed across processes, DPoP-bound when the server wants it).
import PackageDescription

let package = Package(
    name: "MCPClient",
    platforms: [.macOS(.v14)],
    dependencies: [
        .package(name: "swift-oidc", path: "../.."),
        .package(url: "https://github.com/modelcontextprotocol/swift-sdk", exact: "0.12.1"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
    ],
    targets: [
        // The authorizer and the connection, as a library so the tests can drive them.
        .target(
            name: "MCPClient",
            dependencies: [
                .product(name: "OIDC", package: "swift-oidc"),
                .product(name: "MCP", package: "swift-sdk"),
            ]
        ),
        .executableTarget(
            name: "mcp-client",
            dependencies: [
                "MCPClient",
                .product(name: "OIDC", package: "swift-oidc"),
                .product(name: "MCP", package: "swift-sdk"),
                // Only without a browser: its TestBrowser follows the login's redirects over HTTP.
                .product(name: "OIDCTesting", package: "swift-oidc"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .testTarget(
            name: "MCPClientTests",
            dependencies: [
                "MCPClient",
                .product(name: "OIDC", package: "swift-oidc"),
                .product(name: "OIDCTesting", package: "swift-oidc"),
                .product(name: "MCP", package: "swift-sdk"),
            ]
        ),
    ]
)
