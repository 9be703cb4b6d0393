import Foundation
import OIDC
import Testing

@Suite("oidc authorize-url")
struct AuthorizeURLCommandTests {
    static let verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"
    static let deterministic = ["--state", "st+&=#/%ä", "--nonce", "n-0S6_WzA2Mj", "--code-verifier", verifier]

    @Test("a Schibsted URL is byte for byte the one the library builds", arguments: [Schibsted.MFAMethod?.none, .otp, .eidSE])
    func schibsted(mfa: Schibsted.MFAMethod?) async throws {
        var arguments = [
            "authorize-url", "--provider", "schibsted", "--environment", "pre", "--client-id", "602525f2b41fa31789a95aa8",
            "--redirect-uri", "com.example.app:/login", "--scope", "email", "--scope", "profile", "--login-hint", "a+b@example.com",
        ] + Self.deterministic
        if let mfa { arguments += ["--mfa", mfa.rawValue] }
        let result = try await OIDCBinary.run(arguments)
        #expect(result.status == 0, "\(result.stderr)")
        let expected = try AuthorizationRequest.schibsted(
            environment: .pre, clientID: "602525f2b41fa31789a95aa8", redirectURI: "com.example.app:/login",
            extraScopes: ["email", "profile"], mfa: mfa, loginHint: "a+b@example.com",
            state: "st+&=#/%ä", nonce: "n-0S6_WzA2Mj", codeVerifier: Self.verifier
        ).url()
        #expect(result.stdout == expected.absoluteString + "\n")
        #expect(result.stderr.isEmpty)
    }

    @Test("a generic URL with every option is byte for byte the library's")
    func generic() async throws {
        let result = try await OIDCBinary.run(
            [
                "authorize-url", "--authorization-endpoint", "https://idp.example/authorize?tenant=a%20b", "--issuer", "https://idp.example",
                "--client-id", "cli app", "--redirect-uri", "http://127.0.0.1:8765/callback", "--scope", "openid", "--scope", "profile",
                "--prompt", "login consent", "--login-hint", "Världen", "--acr-values", "urn:acr:2", "--max-age", "300",
                "--ui-locales", "sv en", "--param", "claims_locales=sv", "--param", "resource=https://api.example/?a=1&b=2",
            ] + Self.deterministic
        )
        #expect(result.status == 0, "\(result.stderr)")
        var request = try AuthorizationRequest(
            authorizationEndpoint: URL(string: "https://idp.example/authorize?tenant=a%20b")!, clientID: "cli app",
            redirectURI: "http://127.0.0.1:8765/callback", scopes: ["openid", "profile"], issuer: "https://idp.example"
        )
        request.state = "st+&=#/%ä"
        request.nonce = "n-0S6_WzA2Mj"
        request.pkce = try PKCE(verifier: Self.verifier)
        request.prompt = "login consent"
        request.loginHint = "Världen"
        request.acrValues = "urn:acr:2"
        request.maxAge = 300
        request.uiLocales = "sv en"
        request.additionalParameters = [OAuthParameter("claims_locales", "sv"), OAuthParameter("resource", "https://api.example/?a=1&b=2")]
        #expect(try result.stdout == request.url().absoluteString + "\n")
        // The exact escapes: a space is %20, and + & = # / % and non-ASCII are escaped inside values.
        #expect(result.stdout.contains("state=st%2B%26%3D%23%2F%25%C3%A4&"))
        #expect(result.stdout.contains("prompt=login%20consent"))
    }

    @Test("a Swan URL is the library's, with openid offline")
    func swan() async throws {
        let result = try await OIDCBinary.run(
            ["authorize-url", "--provider", "swan", "--client-id", "SANDBOX_x", "--redirect-uri", "https://app.example/cb"] + Self.deterministic
        )
        #expect(result.status == 0, "\(result.stderr)")
        var request = try AuthorizationRequest(provider: .swan, clientID: "SANDBOX_x", redirectURI: "https://app.example/cb")
        request.state = "st+&=#/%ä"
        request.nonce = "n-0S6_WzA2Mj"
        request.pkce = try PKCE(verifier: Self.verifier)
        #expect(try result.stdout == request.url().absoluteString + "\n")
        #expect(result.stdout.hasPrefix("https://oauth.swan.io/oauth2/auth?"))
        #expect(result.stdout.contains("scope=openid%20offline"))
    }

    @Test("--output json carries the URL, state, nonce, verifier and challenge")
    func json() async throws {
        let result = try await OIDCBinary.run(
            ["authorize-url", "--authorization-endpoint", "https://idp.example/authorize", "--client-id", "c", "--redirect-uri", "http://127.0.0.1/callback", "--output", "json"]
                + Self.deterministic
        )
        #expect(result.status == 0, "\(result.stderr)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        #expect(object["state"] as? String == "st+&=#/%ä")
        #expect(object["nonce"] as? String == "n-0S6_WzA2Mj")
        #expect(object["code_verifier"] as? String == Self.verifier)
        #expect(object["code_challenge"] as? String == "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM")
        #expect(object["code_challenge_method"] as? String == "S256")
        #expect((object["url"] as? String)?.contains("code_challenge=E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM") == true)
    }

    @Test("without the deterministic flags each run is fresh, and the default redirect is said on stderr")
    func random() async throws {
        let arguments = ["authorize-url", "--authorization-endpoint", "https://idp.example/authorize", "--client-id", "c"]
        let first = try await OIDCBinary.run(arguments)
        let second = try await OIDCBinary.run(arguments)
        #expect(first.status == 0 && second.status == 0)
        #expect(first.stdout != second.stdout)
        #expect(first.stdout.contains("redirect_uri=http%3A%2F%2F127.0.0.1%2Fcallback"))
        #expect(first.stderr.contains("http://127.0.0.1/callback"))
    }

    @Test("a state, nonce or verifier that starts with a dash is taken as the value, not as a flag")
    func dashFirstValues() async throws {
        // With a v and an h in them: not read as -v, or as -h (help on stdout).
        let verifier = "-vh" + Self.verifier.dropFirst(3)
        let result = try await OIDCBinary.run(
            ["authorize-url", "--authorization-endpoint", "https://idp.example/authorize", "--client-id", "-vh_client",
             "--state", "-state", "--nonce", "-nonce", "--code-verifier", verifier, "--output", "json"]
        )
        #expect(result.status == 0, "\(result.stderr)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        #expect(object["state"] as? String == "-state" && object["nonce"] as? String == "-nonce")
        #expect(object["code_verifier"] as? String == verifier)
        #expect((object["url"] as? String)?.contains("client_id=-vh_client&") == true, "\(object["url"] ?? "")")
        // `-` alone and a long option are not taken as the value.
        let missing = try await OIDCBinary.run(
            ["authorize-url", "--authorization-endpoint", "https://idp.example/authorize", "--client-id", "c", "--state", "--output", "json"])
        #expect(missing.status == 2 && missing.stdout.isEmpty && missing.stderr.contains("--state"), "\(missing.stderr)")
    }

    @Test("bad flags are usage errors (exit 2) that name the flag", arguments: [
        (["--code-verifier", "short"], "--code-verifier"),
        (["--redirect-uri", "relative/path"], "--redirect-uri"),
        (["--provider", "okta"], "--provider"),
        (["--max-age", "-5"], "--max-age"),
        (["--max-age", "soon"], "--max-age"),
        (["--param", "novalue"], "--param"),
        (["--param", "state=x"], "--param"),
        (["--param", "ui_locales=sv"], "--param"),
        (["--output", "xml"], "--output"),
        (["--state", ""], "--state"),
        (["--mfa", "otp"], "--mfa"),
        (["--no-such-flag"], "--no-such-flag"),
        (["--param", "x=1", "--param", "x=2"], "--param"),
        (["--scope", "a\"b"], "--scope"),
        (["--client-id", ""], "--client-id"),
        (["--authorization-endpoint", "http://idp.example/authorize"], "--authorization-endpoint"),
        (["--authorization-endpoint", "https://idp.example/authorize?client_id=x"], "--authorization-endpoint"),
    ])
    func usage(extra: [String], flag: String) async throws {
        let result = try await OIDCBinary.run(
            ["authorize-url", "--authorization-endpoint", "https://idp.example/authorize", "--client-id", "c"] + extra
        )
        #expect(result.status == 2)
        #expect(result.stderr.contains(flag), "\(result.stderr)")
        #expect(result.stdout.isEmpty)
    }

    @Test("Schibsted usage errors name the flag", arguments: [
        (["--environment", "moon"], "environment"),
        ([] as [String], "--environment"),
        (["--environment", "pre", "--mfa", "retina"], "--mfa"),
        (["--environment", "pre", "--mfa", "otp", "--prompt", "login"], "--prompt"),
        (["--environment", "sweden", "--mfa", "eid-se"], "--mfa"),
    ])
    func schibstedUsage(extra: [String], flag: String) async throws {
        let result = try await OIDCBinary.run(["authorize-url", "--provider", "schibsted", "--client-id", "c", "--redirect-uri", "com.example:/login"] + extra)
        #expect(result.status == 2)
        #expect(result.stderr.contains(flag), "\(result.stderr)")
    }

    @Test("--version names the OpenSSL it runs on; --help lists the subcommands")
    func versionAndHelp() async throws {
        let version = try await OIDCBinary.run(["--version"])
        #expect(version.status == 0)
        #expect(version.stdout.contains("OpenSSL 3"))
        let help = try await OIDCBinary.run(["--help"])
        #expect(help.status == 0)
        for name in ["authorize-url", "verify", "decode"] { #expect(help.stdout.contains(name)) }
    }
}
