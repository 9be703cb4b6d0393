import Foundation
import OIDC
import OIDCTesting
import OIDCTestSupport
import Testing

/// User trial 5's message findings (F9, F10, F13, F14, F21, F22), each run as the built binary
/// against TestProvider over loopback HTTP, or with files: what a new user reads when a command is
/// given something slightly wrong.
@Suite("User trial 5: messages of discover, verify, mint, authorize-url and help", .timeLimit(.scaledMinutes(2)))
struct UserTrial5MessageTests {
    @Test("F9: an issuer with a wrong path names every discovery URL tried and --issuer, not the client's registration")
    func wrongIssuerPath() async throws {
        try await withTestProvider { provider in
            let issuer = provider.issuer + "/realms/x"
            let origin = try #require(URL(string: provider.issuer)).absoluteString
            for arguments in [["discover", issuer], ["login", "--issuer", issuer, "--client-id", "test-client", "--no-browser", "--profile", "f9"]] {
                let result = try await OIDCBinary.run(arguments, environment: LoginSandbox().environment())
                #expect(result.status == 4, "\(result.stderr)")
                #expect(result.stderr.contains("No discovery document at the issuer \(issuer)"), "\(result.stderr)")
                #expect(result.stderr.contains(issuer + "/.well-known/openid-configuration"), "\(result.stderr)")
                #expect(result.stderr.contains(origin + "/.well-known/oauth-authorization-server/realms/x"), "\(result.stderr)")
                #expect(result.stderr.contains("--issuer"), "\(result.stderr)")
                #expect(!result.stderr.contains("registration"), "\(result.stderr)")
            }
        }
    }

    @Test("F10: https to a plain-http server is said to be one, with the http URL, exit 6; not a certificate problem")
    func httpsToPlainHTTP() async throws {
        try await withTestProvider { provider in
            let port = try #require(URL(string: provider.issuer)?.port)
            let authority = "127.0.0.1:\(port)"
            let result = try await OIDCBinary.run(["discover", "https://" + authority])
            #expect(result.status == 6, "\(result.stderr)")
            #expect(result.stderr.contains("does not speak TLS on this port"), "\(result.stderr)")
            #expect(result.stderr.contains("did you mean http://\(authority)?"), "\(result.stderr)")
            #expect(!result.stderr.contains("certificate"), "\(result.stderr)")
        }
    }

    @Test("F10: an issuer without a scheme is refused naming http on loopback, with the URL it was meant as (exit 2)", arguments: [
        ("127.0.0.1:36703", "http://127.0.0.1:36703"), ("localhost:8080", "http://localhost:8080"), ("login.example.com", "https://login.example.com"),
    ])
    func issuerWithoutScheme(issuer: String, meant: String) async throws {
        for arguments in [["discover", issuer], ["login", "--issuer", issuer, "--client-id", "test-client", "--no-browser"]] {
            let result = try await OIDCBinary.run(arguments, environment: LoginSandbox().environment())
            #expect(result.status == 2, "\(result.stderr)")
            #expect(result.stderr.contains("must be an absolute https URL"), "\(result.stderr)")
            #expect(result.stderr.contains("or http on a loopback address: \(meant)"), "\(result.stderr)")
        }
    }

    @Test("F13: the TLS flags' help says that only login remembers the paths, on every command that takes them", arguments: [
        "login", "token", "refresh", "request", "logout", "introspect", "exchange",
    ])
    func tlsFlagHelp(command: String) async throws {
        let help = try await OIDCBinary.run([command, "--help"])
        #expect(help.status == 0, "\(help.stderr)")
        let text = help.stdout.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        // (login's --private-key-file is remembered, rightly: only the TLS flags' texts are checked.)
        for wrong in ["Needs --client-key. The path is remembered", "(chmod 600). The path is remembered", "a link to one. The path is remembered"] {
            #expect(!text.contains(wrong), "\(wrong): \(text)")
        }
        for flag in ["--client-certificate", "--client-key", "--ca-file"] { #expect(text.contains(flag)) }
        #expect(text.contains("oidc login remembers the path in the profile; any other command uses it for this run only"), "\(text)")
    }

    @Test("F14: authorize-url with --issuer and no --authorization-endpoint discovers it, as login does; with neither, exit 2 naming both")
    func authorizeURLDiscovers() async throws {
        try await withTestProvider { provider in
            let arguments = ["authorize-url", "--issuer", provider.issuer, "--client-id", "test-client", "--redirect-uri", "http://127.0.0.1/callback"]
                + AuthorizeURLCommandTests.deterministic
            let result = try await OIDCBinary.run(arguments)
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stdout.hasPrefix(provider.authorizationEndpoint + "?"), "\(result.stdout)")
            #expect(await provider.requestCount(.discovery) >= 1)
            let url = try #require(URLComponents(string: result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)))
            #expect(url.queryItems?.first { $0.name == "client_id" }?.value == "test-client")
            #expect(url.queryItems?.first { $0.name == "code_challenge_method" }?.value == "S256")
        }
        let neither = try await OIDCBinary.run(["authorize-url", "--client-id", "test-client"])
        #expect(neither.status == 2)
        #expect(neither.stderr.contains("--issuer or --authorization-endpoint is required"), "\(neither.stderr)")
    }

    @Test("F21: an at+jwt checked as an ID token says to use --kind access")
    func accessTokenAsIDToken() async throws {
        let tokens = try AccessTokenIssuer()
        let result = try await OIDCBinary.run(["verify", "-"] + tokens.arguments, stdin: try tokens.token())
        #expect(result.status == 4, "\(result.stderr)")
        #expect(result.stderr.contains("at+jwt"), "\(result.stderr)")
        #expect(result.stderr.contains("It is an access token: use --kind access."), "\(result.stderr)")
        // An ID token's own refusals do not get the hint.
        let idToken = try tokens.token(["aud": "other"], header: ["typ": "JWT"])
        let other = try await OIDCBinary.run(["verify", "-"] + tokens.arguments, stdin: idToken)
        #expect(other.status == 4)
        #expect(!other.stderr.contains("--kind access"), "\(other.stderr)")
    }

    @Test("F21: --jwks naming a discovery document (URL or file) is a usage error that names its jwks_uri")
    func jwksIsDiscoveryDocument() async throws {
        try await withTestProvider { provider in
            let tokens = try AccessTokenIssuer()
            let file = try ProviderAndMintCommandTests.temporaryFile(#"{"issuer":"\#(provider.issuer)","jwks_uri":"\#(provider.jwksURI)"}"#)
            for jwks in [provider.discoveryURL, file] {
                for kind in ["id", "access"] {
                    let result = try await OIDCBinary.run(
                        ["verify", "-", "--kind", kind, "--issuer", AccessTokenIssuer.issuer, "--audience", AccessTokenIssuer.audience, "--jwks", jwks],
                        stdin: try tokens.token())
                    #expect(result.status == 2, "\(kind) \(jwks): \(result.stderr)")
                    #expect(result.stderr.contains("is a discovery document, not a JWKS; its jwks_uri is \(provider.jwksURI)"), "\(result.stderr)")
                }
            }
            // A JWKS without keys that is no discovery document keeps its own message.
            let empty = try ProviderAndMintCommandTests.temporaryFile(#"{"issuer":"x"}"#)
            let result = try await OIDCBinary.run(["verify", "-"] + tokens.arguments.dropLast(2) + ["--jwks", empty], stdin: try tokens.token())
            #expect(result.stderr.contains("'keys'") && !result.stderr.contains("discovery document"), "\(result.stderr)")
        }
    }

    @Test("F21: --kind access --require-scope names the scopes the token lacks and those it grants, without the word request")
    func missingScopeNamed() async throws {
        let tokens = try AccessTokenIssuer()
        let result = try await OIDCBinary.run(
            ["verify", "-", "--kind", "access", "--require-scope", "read", "--require-scope", "write admin"] + tokens.arguments,
            stdin: try tokens.token(["scope": "read"]))
        #expect(result.status == 4, "\(result.stderr)")
        #expect(result.stderr.contains("(insufficient_scope)"), "\(result.stderr)")
        #expect(result.stderr.contains("lacks the scopes --require-scope names: write admin (it grants: read)"), "\(result.stderr)")
        #expect(!result.stderr.contains("request"), "\(result.stderr)")
        #expect(result.stdout.isEmpty)
    }

    @Test("F22: mint with a key that cannot sign --alg names the key's type and the algorithms it signs; exit 2, no usage", arguments: [
        ("ec-p256-sec1.pem", "RS256", "the key is an EC P-256 key, which cannot sign RS256: use --alg ES256."),
        ("ed25519-pkcs8.pem", "ES256", "the key is an Ed25519 key, which cannot sign ES256: use --alg EdDSA or Ed25519."),
    ])
    func mintWrongKeyType(key: String, alg: String, message: String) async throws {
        let file = try ProviderAndMintCommandTests.temporaryFile(try ClientCredentialsCommandTests.fixtureKey(key))
        let result = try await OIDCBinary.run(["mint", "--key", file, "--alg", alg, "--claims", #"{"sub":"u1"}"#])
        #expect(result.status == 2, "\(result.stderr)")
        #expect(result.stderr.contains("--key: " + message), "\(result.stderr)")
        #expect(!result.stderr.contains("Usage:"), "\(result.stderr)")
        #expect(result.stdout.isEmpty)
        // The right algorithm signs.
        let right = try #require(message.firstMatch(of: /use --alg (\w+)/)).1
        let signed = try await OIDCBinary.run(["mint", "--key", file, "--alg", String(right), "--claims", #"{"sub":"u1"}"#])
        #expect(signed.status == 0, "\(signed.stderr)")
    }
}
