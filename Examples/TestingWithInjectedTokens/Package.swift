// swift-tools-version:6.1
// The test suite of an imaginary app (ProfileApp) that starts logged in through token injection,
// with OIDCTesting's provider on 127.0.0.1 instead of a real identity provider.
import PackageDescription

let package = Package(
    name: "TestingWithInjectedTokens",
    dependencies: [
        .package(name: "swift-oidc", path: "../.."),
    ],
    targets: [
        // The app: shows the signed-in user's profile from an API, or the login screen.
        .target(name: "ProfileApp", dependencies: [.product(name: "OIDC", package: "swift-oidc")]),
        // Its tests: only the tests depend on OIDCTesting.
        .testTarget(
            name: "ProfileAppTests",
            dependencies: [
                "ProfileApp",
                .product(name: "OIDC", package: "swift-oidc"),
                .product(name: "OIDCTesting", package: "swift-oidc"),
            ]
        ),
    ]
)
