// swift-tools-version:6.2
// Access-token verification, OIDCResourceServer beside vapor/jwt-kit doing the same checks by
// hand, in one process. A package of its own so that swift-oidc's own builds never compile
// jwt-kit and swift-crypto: `make bench` runs it (in the root's .build, so swift-oidc's release
// objects are shared with oidc-bench).
//
//     swift run -c release access-token-bench [--requests N] [--rounds R]
import PackageDescription

let package = Package(
    name: "access-token-bench",
    platforms: [.macOS(.v14)],
    dependencies: [
        .package(name: "swift-oidc", path: "../.."),
        .package(url: "https://github.com/vapor/jwt-kit", from: "5.7.1"),
    ],
    targets: [
        .executableTarget(
            name: "access-token-bench",
            dependencies: [
                .product(name: "OIDC", package: "swift-oidc"),
                .product(name: "OIDCResourceServer", package: "swift-oidc"),
                .product(name: "OIDCTesting", package: "swift-oidc"),
                .product(name: "JWTKit", package: "jwt-kit"),
            ],
            path: "Sources"
        )
    ]
)
