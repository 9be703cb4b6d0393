// swift-tools-version:6.2
// An API protected by swift-oidc's OIDCResourceServer, twice: with Hummingbird (OIDCHummingbird) and
// with Vapor (OIDCVapor). Both take `oidc resource-server`'s flags and answer as it does.
import PackageDescription

let package = Package(
    name: "ProtectedAPI",
    platforms: [.macOS(.v14)],
    dependencies: [
        .package(name: "swift-oidc", path: "../.."),
        // No default traits: neither swift-configuration nor full Foundation is needed here.
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1", traits: []),
        .package(url: "https://github.com/vapor/vapor", from: "4.122.3"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        // Already in Hummingbird's graph: a graceful stop.
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
    ],
    targets: [
        // The flags both programs take (oidc resource-server's), the kit's configuration they
        // give, and what a command-line server does around its routes: signals, exit codes, logs.
        .target(
            name: "ResourceServerFlags",
            dependencies: [
                .product(name: "OIDC", package: "swift-oidc"),
                .product(name: "OIDCResourceServer", package: "swift-oidc"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The Hummingbird routes: RequireAccess, the access in the request context, the metadata route.
        .target(
            name: "ProtectedAPI",
            dependencies: [
                .product(name: "OIDCResourceServer", package: "swift-oidc"),
                .product(name: "OIDCHummingbird", package: "swift-oidc"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The same routes in Vapor.
        .target(
            name: "ProtectedAPIVapor",
            dependencies: [
                .product(name: "OIDCResourceServer", package: "swift-oidc"),
                .product(name: "OIDCVapor", package: "swift-oidc"),
                .product(name: "Vapor", package: "vapor"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .executableTarget(
            name: "protected-api",
            dependencies: [
                "ProtectedAPI", "ResourceServerFlags",
                .product(name: "OIDC", package: "swift-oidc"),
                .product(name: "OIDCResourceServer", package: "swift-oidc"),
                // Only for --demo: a provider on 127.0.0.1 that issues the tokens.
                .product(name: "OIDCTesting", package: "swift-oidc"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .executableTarget(
            name: "protected-api-vapor",
            dependencies: [
                "ProtectedAPIVapor", "ResourceServerFlags",
                .product(name: "OIDC", package: "swift-oidc"),
                .product(name: "OIDCResourceServer", package: "swift-oidc"),
            ]
        ),
        .testTarget(
            name: "ProtectedAPITests",
            dependencies: [
                "ProtectedAPI", "ProtectedAPIVapor", "ResourceServerFlags",
                .product(name: "OIDC", package: "swift-oidc"),
                .product(name: "OIDCResourceServer", package: "swift-oidc"),
                .product(name: "OIDCTesting", package: "swift-oidc"),
            ]
        ),
    ]
)
