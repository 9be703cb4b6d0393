// swift-tools-version:6.1
// A daemon (or a CI job) that calls an API with its own tokens, no person involved: the
// client-credentials grant with private_key_jwt or a client secret, through swift-oidc's
// RelyingParty and its service session.
import PackageDescription

let package = Package(
    name: "DaemonWithClientCredentials",
    dependencies: [
        .package(name: "swift-oidc", path: "../.."),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        // Already in swift-oidc's graph: the library's log lines on stderr (LOG_LEVEL).
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
    ],
    targets: [
        // The configuration and the job, as a library so the tests can drive them.
        .target(
            name: "ReportDaemon",
            dependencies: [
                .product(name: "OIDC", package: "swift-oidc"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .executableTarget(
            name: "report-daemon",
            dependencies: [
                "ReportDaemon",
                .product(name: "OIDC", package: "swift-oidc"),
                .product(name: "Logging", package: "swift-log"),
                // Only for --demo: a provider on 127.0.0.1 with the daemon registered as a client.
                .product(name: "OIDCTesting", package: "swift-oidc"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .testTarget(
            name: "ReportDaemonTests",
            dependencies: [
                "ReportDaemon",
                .product(name: "OIDC", package: "swift-oidc"),
                .product(name: "OIDCTesting", package: "swift-oidc"),
            ]
        ),
    ]
)
