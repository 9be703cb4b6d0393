// swift-tools-version:6.2
// "Sign in with your provider" for a Hummingbird web app, with swift-oidc's OIDCHummingbird: the
// code flow with PKCE, a server-side session, refresh, and sign-out.
import PackageDescription

let package = Package(
    name: "WebSignIn",
    platforms: [.macOS(.v14)],
    dependencies: [
        .package(name: "swift-oidc", path: "../.."),
        // No default traits: neither swift-configuration nor full Foundation is needed here.
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1", traits: []),
        // Already in Hummingbird's graph: the demo's free port and quiet log.
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
    ],
    targets: [
        // The app: a signed-in page and the sign-in routes (the lines an app writes).
        .target(
            name: "WebApp",
            dependencies: [
                .product(name: "OIDC", package: "swift-oidc"),
                .product(name: "OIDCHummingbird", package: "swift-oidc"),
                .product(name: "Hummingbird", package: "hummingbird"),
            ]
        ),
        // `web-sign-in --demo`: OIDCTesting's provider, the app beside it, and a browser's visit.
        .target(
            name: "WebSignInDemo",
            dependencies: [
                "WebApp",
                .product(name: "OIDC", package: "swift-oidc"),
                .product(name: "OIDCHummingbird", package: "swift-oidc"),
                .product(name: "OIDCTesting", package: "swift-oidc"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .executableTarget(
            name: "web-sign-in",
            dependencies: [
                "WebApp", "WebSignInDemo",
                .product(name: "OIDC", package: "swift-oidc"),
                .product(name: "Hummingbird", package: "hummingbird"),
            ]
        ),
        .testTarget(
            name: "WebSignInTests",
            dependencies: ["WebSignInDemo"]
        ),
    ]
)
