// swift-tools-version:6.1
// A terminal tool of its own that logs its user in through swift-oidc's loopback listener (RFC 8252),
// keeps the login in a FileKeychain and calls an API through an AuthenticatedSession.
import PackageDescription

let package = Package(
    name: "TerminalLogin",
    dependencies: [
        .package(name: "swift-oidc", path: "../.."),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
    ],
    targets: [
        // The login and the API call, as a library so the test can drive them.
        .target(name: "TerminalLogin", dependencies: [.product(name: "OIDC", package: "swift-oidc")]),
        .executableTarget(
            name: "terminal-login",
            dependencies: [
                "TerminalLogin",
                .product(name: "OIDC", package: "swift-oidc"),
                // Only for --demo: a provider on 127.0.0.1 and a browser stand-in when there is no display.
                .product(name: "OIDCTesting", package: "swift-oidc"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .testTarget(
            name: "TerminalLoginTests",
            dependencies: [
                "TerminalLogin",
                .product(name: "OIDC", package: "swift-oidc"),
                .product(name: "OIDCTesting", package: "swift-oidc"),
            ]
        ),
    ]
)
