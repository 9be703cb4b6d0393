// swift-tools-version:6.1
import PackageDescription

let strictSettings: [SwiftSetting] = [
    .enableUpcomingFeature("MemberImportVisibility"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

let package = Package(
    name: "swift-oidc",
    products: [
        .library(name: "OIDC", targets: ["OIDC"]),
        .library(name: "OIDCTesting", targets: ["OIDCTesting"]),
        // Logins in PostgreSQL for servers with many instances; OIDC users who do not import it never build it.
        .library(name: "OIDCPostgres", targets: ["OIDCPostgres"]),
        // The other end of the token: APIs that check what clients send (RFC 9068, 7662, 9449, 8705, 9728).
        .library(name: "OIDCResourceServer", targets: ["OIDCResourceServer"]),
        // A Hummingbird 2 app's protected routes: RequireAccess, the access in the request context,
        // the RFC 9728 metadata route. Only what imports it builds Hummingbird: OIDC and oidc never do.
        .library(name: "OIDCHummingbird", targets: ["OIDCHummingbird"]),
        // A Vapor 4 app's protected routes: RequireAccess, request.verifiedAccess, the RFC 9728
        // metadata route. Only what imports it builds Vapor: OIDC and oidc never do.
        .library(name: "OIDCVapor", targets: ["OIDCVapor"]),
        // An OpenAPI-generated client's middleware: every operation through a session's resource pipeline.
        .library(name: "OIDCOpenAPI", targets: ["OIDCOpenAPI"]),
        .executable(name: "oidc", targets: ["oidc"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        // OIDCHummingbird's framework; no default traits (neither swift-configuration nor full Foundation).
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1", traits: []),
        // OIDCVapor's framework.
        .package(url: "https://github.com/vapor/vapor", from: "4.122.3"),
        // Already in Hummingbird's graph: the names of its header fields.
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        // OIDCOpenAPI's ClientMiddleware protocol (it depends on swift-http-types alone).
        .package(url: "https://github.com/apple/swift-openapi-runtime", from: "1.13.4"),
        // `swift package generate-documentation`: the DocC catalogs of OIDC and OIDCTesting.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
    ],
    targets: [
        // OpenSSL 3 libcrypto; only Sources/OIDC/OpenSSL/ imports it.
        .systemLibrary(
            name: "COpenSSL",
            pkgConfig: "libcrypto",
            providers: [.apt(["libssl-dev"])]
        ),
        // libjwt 1.10's header; only OIDCTesting's token minter uses it (never to verify), and loads
        // the library with dlopen on first use: nothing links libjwt (see Sources/OIDCTesting/LibJWT.swift).
        .systemLibrary(
            name: "CJWT",
            providers: [.apt(["libjwt-dev"])]
        ),
        // libqrencode 4's header; `oidc login --qr` loads the library with dlopen when asked, so
        // nothing links it (see Sources/oidc/Device/QRCode.swift).
        .systemLibrary(
            name: "CQREncode",
            providers: [.apt(["libqrencode-dev"])]
        ),
        .target(
            name: "OIDC",
            dependencies: [
                "COpenSSL",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSettings
        ),
        .target(
            name: "OIDCTesting",
            dependencies: [
                // TestProvider checks DPoP proofs with the kit's verifier (one implementation).
                "OIDC", "OIDCResourceServer", "CJWT",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            swiftSettings: strictSettings
        ),
        // Framework-neutral: a request's method, URL, headers (and peer certificate) in, a verified
        // access or a refusal with its challenge out. No NIO server pieces.
        .target(
            name: "OIDCResourceServer",
            dependencies: ["OIDC", .product(name: "Logging", package: "swift-log")],
            swiftSettings: strictSettings
        ),
        .target(
            name: "OIDCPostgres",
            dependencies: [
                "OIDC", "OIDCResourceServer",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSettings
        ),
        .target(
            name: "OIDCHummingbird",
            dependencies: [
                "OIDC", "OIDCResourceServer",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSettings
        ),
        .target(
            name: "OIDCVapor",
            dependencies: [
                "OIDC", "OIDCResourceServer",
                .product(name: "Vapor", package: "vapor"),
            ],
            swiftSettings: strictSettings
        ),
        .target(
            name: "OIDCOpenAPI",
            dependencies: [
                "OIDC",
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            swiftSettings: strictSettings
        ),
        .executableTarget(
            name: "oidc",
            dependencies: [
                "OIDC", "OIDCTesting", "OIDCResourceServer", "CQREncode",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSettings
        ),
        // `swift run -c release oidc-bench`: ID-token verification against a bare OpenSSL loop;
        // `--resource-server`: OIDCResourceServer's DPoP requests against bare verifications, two tasks against one.
        .executableTarget(
            name: "oidc-bench",
            dependencies: ["OIDC", "OIDCTesting", "OIDCResourceServer", "COpenSSL"],
            path: "Benchmarks/oidc-bench",
            swiftSettings: strictSettings
        ),
        // The helper executables' `say` and `fail`.
        .target(
            name: "HelperSupport",
            path: "Tests/Helpers/HelperSupport",
            swiftSettings: strictSettings
        ),
        // The FileKeychain tests' writer, killed mid-write and holding the lock from another process.
        .executableTarget(
            name: "oidc-store-writer",
            dependencies: ["OIDC", "HelperSupport"],
            path: "Tests/Helpers/StoreWriter",
            swiftSettings: strictSettings
        ),
        // The CLI tests' user agent, given to `oidc login` as $BROWSER: follows redirects, signs in.
        .executableTarget(
            name: "oidc-test-browser",
            dependencies: ["OIDC", "OIDCTesting"],
            path: "Tests/Helpers/TestBrowser",
            swiftSettings: strictSettings
        ),
        // The PostgresTokenStore tests' other instances: a process with its own pool and session.
        .executableTarget(
            name: "oidc-postgres-worker",
            dependencies: [
                "OIDC", "OIDCPostgres", "HelperSupport",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Tests/Helpers/PostgresWorker",
            swiftSettings: strictSettings
        ),
        // `swift run -c release oidc-postgres-bench`: load, save and the locked refresh path against a local server.
        .executableTarget(
            name: "oidc-postgres-bench",
            dependencies: [
                "OIDC", "OIDCTesting", "OIDCPostgres",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Benchmarks/oidc-postgres-bench",
            swiftSettings: strictSettings
        ),
        // What the test targets share: free ports, the raw HTTP client, the log recorder, the
        // session fixture, the helper processes' lines.
        .target(
            name: "OIDCTestSupport",
            dependencies: [
                "OIDC", "OIDCTesting",
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Tests/OIDCTestSupport",
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "OIDCPostgresTests",
            dependencies: [
                "OIDC", "OIDCTesting", "OIDCTestSupport", "OIDCPostgres", "oidc-postgres-worker",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "OIDCTests",
            dependencies: [
                "OIDC", "OIDCTesting", "OIDCTestSupport", "oidc-store-writer",
                // The transport tests' own small servers.
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
            ],
            exclude: ["Fixtures"],  // read from disk by path (#filePath)
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "OIDCResourceServerTests",
            dependencies: ["OIDCResourceServer", "OIDC", "OIDCTesting", "OIDCTestSupport"],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "OIDCHummingbirdTests",
            dependencies: [
                "OIDCHummingbird", "OIDCResourceServer", "OIDC", "OIDCTesting", "OIDCTestSupport",
                // Web sign-in's sessions in PostgreSQL, shared by two instances of an app.
                "OIDCPostgres", .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "OIDCVaporTests",
            dependencies: [
                "OIDCVapor", "OIDCResourceServer", "OIDC", "OIDCTesting", "OIDCTestSupport",
                .product(name: "Vapor", package: "vapor"),
            ],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "OIDCOpenAPITests",
            dependencies: [
                "OIDCOpenAPI", "OIDC", "OIDCTesting",
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "OIDCTestingTests",
            dependencies: ["OIDCTesting", "OIDC", "OIDCTestSupport"],
            exclude: ["Fixtures"],
            swiftSettings: strictSettings
        ),
        .testTarget(
            name: "OIDCCLITests",
            dependencies: ["oidc", "oidc-store-writer", "oidc-test-browser", "OIDC", "OIDCTesting", "OIDCTestSupport"],
            swiftSettings: strictSettings
        ),
    ]
)
