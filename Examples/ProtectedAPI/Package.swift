// swift-tools-version:6.2
// A Hummingbird API protected by swift-oidc's OIDCResourceServer: bearer and DPoP-bound access
// tokens, scopes per route, RFC 9728 metadata, through the OIDCHummingbird middleware.
import PackageDescription

let package = Package(
    name: "ProtectedAPI",
    platforms: [.macOS(.v14)],
    dependencies: [
        .package(name: "swift-oidc", path: "../.."),
        // No default traits: neither swift-configuration nor full Foundation is needed here.
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1", traits: []),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        // Already in Hummingbird's graph: its requests' header fields.
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        // Already in Hummingbird's graph: a graceful stop for the demo and the tests.
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
    ],
    targets: [
        // The middleware and the routes, as a library so the tests can serve them.
        .target(
            name: "ProtectedAPI",
            dependencies: [
                .product(name: "OIDC", package: "swift-oidc"),
                .product(name: "OIDCResourceServer", package: "swift-oidc"),
                // RequireAccess, the access in the request context, the metadata route.
                .product(name: "OIDCHummingbird", package: "swift-oidc"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .executableTarget(
            name: "protected-api",
            dependencies: [
                "ProtectedAPI",
                .product(name: "OIDC", package: "swift-oidc"),
                .product(name: "OIDCResourceServer", package: "swift-oidc"),
                // Only for --demo: a provider on 127.0.0.1 that issues the tokens.
                .product(name: "OIDCTesting", package: "swift-oidc"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .testTarget(
            name: "ProtectedAPITests",
            dependencies: [
                "ProtectedAPI",
                .product(name: "OIDC", package: "swift-oidc"),
                .product(name: "OIDCResourceServer", package: "swift-oidc"),
                .product(name: "OIDCTesting", package: "swift-oidc"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ]
        ),
    ]
)
