// swift-tools-version:6.2
// A Hummingbird server doing Swan's server-side login (a confidential client) and checking consent
// redirects with Swan's API, with swift-oidc.
import PackageDescription

let package = Package(
    name: "SwanBackend",
    platforms: [.macOS(.v14)],
    dependencies: [
        .package(name: "swift-oidc", path: "../.."),
        // No default traits: neither swift-configuration nor full Foundation is needed here.
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1", traits: []),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        // Already in Hummingbird's graph: a graceful stop and quiet logs for the demo and the tests.
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
    ],
    targets: [
        .target(
            name: "SwanBackend",
            dependencies: [
                .product(name: "OIDC", package: "swift-oidc"),
                // The back-channel logout endpoint.
                .product(name: "OIDCResourceServer", package: "swift-oidc"),
                // Sessions in PostgreSQL when DATABASE_URL is set.
                .product(name: "OIDCPostgres", package: "swift-oidc"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Hummingbird", package: "hummingbird"),
            ]
        ),
        // Stand-ins for Swan (a provider configured like it, its consent API) for the demo and the tests.
        .target(
            name: "SwanStandIns",
            dependencies: [
                "SwanBackend",
                .product(name: "OIDC", package: "swift-oidc"),
                .product(name: "OIDCTesting", package: "swift-oidc"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .executableTarget(
            name: "swan-backend",
            dependencies: [
                "SwanBackend", "SwanStandIns",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "OIDC", package: "swift-oidc"),
                .product(name: "OIDCResourceServer", package: "swift-oidc"),
                .product(name: "OIDCTesting", package: "swift-oidc"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .testTarget(
            name: "SwanBackendTests",
            dependencies: [
                "SwanBackend", "SwanStandIns",
                .product(name: "OIDCResourceServer", package: "swift-oidc"),
                .product(name: "OIDCPostgres", package: "swift-oidc"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "OIDC", package: "swift-oidc"),
                .product(name: "OIDCTesting", package: "swift-oidc"),
                .product(name: "Hummingbird", package: "hummingbird"),
            ]
        ),
    ]
)
