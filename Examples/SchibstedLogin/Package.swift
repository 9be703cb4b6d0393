// swift-tools-version:6.1
// A Schibsted account login with swift-oidc's preset, end to end: the environment, MFA through
// acr_values, the BankID redirect rule, X-OIDC: v1, and the SDK's keychain key.
import PackageDescription

let package = Package(
    name: "SchibstedLogin",
    dependencies: [
        .package(name: "swift-oidc", path: "../.."),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
    ],
    targets: [
        .target(name: "SchibstedLogin", dependencies: [.product(name: "OIDC", package: "swift-oidc")]),
        .executableTarget(
            name: "schibsted-login",
            dependencies: [
                "SchibstedLogin",
                .product(name: "OIDC", package: "swift-oidc"),
                // Only for --demo: OIDCTesting's provider standing in for Schibsted's pre environment.
                .product(name: "OIDCTesting", package: "swift-oidc"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .testTarget(
            name: "SchibstedLoginTests",
            dependencies: [
                "SchibstedLogin",
                .product(name: "OIDC", package: "swift-oidc"),
                .product(name: "OIDCTesting", package: "swift-oidc"),
            ]
        ),
    ]
)
