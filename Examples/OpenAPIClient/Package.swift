// swift-tools-version:6.1
// An OpenAPI-generated client (swift-openapi-generator) authorized by a swift-oidc login: the
// OIDCOpenAPI middleware sends every operation through the session's resource pipeline (token,
// DPoP proofs, nonce retry, refresh on a 401, the step-up error). The generated code is committed
// (Sources/OpenAPIClient/Generated, from openapi.yaml; see the README), so building this example
// builds no generator.
import PackageDescription

let package = Package(
    name: "OpenAPIClient",
    platforms: [.macOS(.v14)],
    dependencies: [
        .package(name: "swift-oidc", path: "../.."),
        .package(url: "https://github.com/apple/swift-openapi-runtime", from: "1.13.4"),
        .package(url: "https://github.com/apple/swift-openapi-urlsession", from: "1.4.0"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
    ],
    targets: [
        .target(
            name: "OpenAPIClient",
            dependencies: [
                .product(name: "OIDC", package: "swift-oidc"),
                .product(name: "OIDCOpenAPI", package: "swift-oidc"),
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "OpenAPIURLSession", package: "swift-openapi-urlsession"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            exclude: ["openapi.yaml", "openapi-generator-config.yaml"]
        ),
        .testTarget(
            name: "OpenAPIClientTests",
            dependencies: [
                "OpenAPIClient",
                .product(name: "OIDC", package: "swift-oidc"),
                .product(name: "OIDCTesting", package: "swift-oidc"),
            ]
        ),
    ]
)
