import Foundation
import OIDC
import OIDCTesting
import OIDCTestSupport
import Testing

/// What a stored login holds is whatever `oidc inject`, a provider's token response or an editor put
/// there: dates far outside any calendar (review 3, L6) and scope values holding terminal control
/// sequences (L3) must neither trap `oidc` nor reach the terminal as themselves.
@Suite("Hostile values in a stored login: odd dates, terminal escapes", .timeLimit(.scaledMinutes(3)))
struct StoredValuesTests {
    static let key = TokenStoreKey(service: "oidc", account: "odd")

    /// An unsigned JWT with these claims: enough for everything that reads a stored ID token unverified.
    static func idToken(_ claims: String) -> String {
        func segment(_ text: String) -> String {
            Data(text.utf8).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
                .replacingOccurrences(of: "=", with: "")
        }
        return segment(#"{"alg":"ES256","typ":"JWT"}"#) + "." + segment(claims) + "." + segment("not-a-signature")
    }

    /// A stored login whose access token expires at `seconds`, received at `received`, with an ID token
    /// whose `exp` is `seconds`: each number written into the file exactly as given. With `provider`,
    /// the login can be refreshed there.
    static func store(expiresAt seconds: String, receivedAt received: String, provider: TestProvider? = nil) async throws -> String {
        let directory = TokenCommandTests.temporaryStore()
        var tokens = TokenSet(accessToken: Secret("access-odd"), refreshToken: Secret("refresh-odd"), expiresAt: Date(), scopes: ["openid"])
        tokens.idToken = Secret(idToken(#"{"iss":"https://i.example","aud":"c","sub":"s","exp":\#(seconds),"iat":1700000000}"#))
        var configuration: ProviderConfiguration?
        if let provider {
            configuration = ProviderConfiguration(issuer: provider.issuer, authorizationEndpoint: nil, tokenEndpoint: URL(string: provider.tokenEndpoint))
            tokens.refreshToken = try await provider.issueTokens().refreshToken
        }
        let login = StoredLogin(tokens: tokens, issuer: provider?.issuer ?? "https://i.example", clientID: "test-client", subject: "s", provider: configuration)
        try FileKeychain(directory: URL(fileURLWithPath: directory)).save(login, for: key)
        // The dates as an editor (or a broken writer) left them: the two numbers replaced in the file.
        let file = directory + "/oidc@odd.json"
        var text = try String(contentsOfFile: file, encoding: .utf8)
        for (name, value) in [("expires_at", seconds), ("received_at", received)] {
            let pattern = try NSRegularExpression(pattern: #""\#(name)"\s*:\s*[-0-9.eE+]+"#)
            #expect(pattern.numberOfMatches(in: text, range: NSRange(text.startIndex..., in: text)) == 1, "\(name) in \(text)")
            text = pattern.stringByReplacingMatches(in: text, range: NSRange(text.startIndex..., in: text), withTemplate: #""\#(name)":\#(value)"#)
        }
        try Data(text.utf8).write(to: URL(fileURLWithPath: file))
        return directory
    }

    /// Each command, through the fast path and through the parser: never a trap, never a runtime failure.
    static func expectNoTrap(_ result: CommandResult, _ what: String) {
        #expect([0, 4].contains(result.status), "\(what): exit \(result.status): \(result.stderr)")
        #expect(!result.stderr.contains("Fatal error") && !result.stderr.contains("runtime failure"), "\(what): \(result.stderr)")
    }

    @Test("dates far beyond year 9999 (exp, expires_at, received_at) are read as 9999-12-31T23:59:59Z: status, every token output and kubectl's credential, no trap", arguments: [
        "1e300", "9.3e18", "9223372036854775807", "253402300800",
    ])
    func farFuture(seconds: String) async throws {
        let store = try await Self.store(expiresAt: seconds, receivedAt: "-" + seconds)
        let base = ["--store", store, "--profile", "odd"]
        let kubectl = ["KUBERNETES_EXEC_INFO": #"{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","spec":{"interactive":false}}"#]
        for fastPath in ["1", "0"] {
            let environment = ["OIDC_FAST_PATH": fastPath]
            let exec = try await OIDCBinary.run(["token", "--output", "exec-credential"] + base, environment: environment.merging(kubectl) { $1 })
            Self.expectNoTrap(exec, "exec-credential, fast path \(fastPath)")
            #expect(exec.stdout.contains(#""expirationTimestamp":"9999-12-31T23:59:59Z""#), "\(exec.stdout)")
            let access = try await OIDCBinary.run(["token", "--output", "exec-credential", "--token-type", "access"] + base, environment: environment)
            Self.expectNoTrap(access, "exec-credential --token-type access")
            #expect(access.stdout.contains(#""expirationTimestamp":"9999-12-31T23:59:59Z""#), "\(access.stdout)")
            let json = try await OIDCBinary.run(["token", "--output", "json"] + base, environment: environment)
            Self.expectNoTrap(json, "token --output json")
            #expect(json.stdout.contains(#""expires_at":253402300799"#), "\(json.stdout)")
            for output in ["token", "id-token"] {
                Self.expectNoTrap(try await OIDCBinary.run(["token", "--output", output] + base, environment: environment), output)
            }
        }
        let status = try await OIDCBinary.run(["status"] + base)
        Self.expectNoTrap(status, "status")
        #expect(status.stdout.contains("expires:     9999-12-31T23:59:59Z"), "\(status.stdout)")
        let statusJSON = try await OIDCBinary.run(["status", "--output", "json"] + base)
        Self.expectNoTrap(statusJSON, "status --output json")
        #expect(statusJSON.stdout.contains(#""id_token_expires_at" : "9999-12-31T23:59:59Z""#), "\(statusJSON.stdout)")
    }

    @Test("dates far before year 1 are read as 0001-01-01: expired, so a refresh is needed, and the refresh works; no trap", arguments: [
        "-1e300", "-9.3e18", "-253402300800",
    ])
    func farPast(seconds: String) async throws {
        let unrefreshable = try await Self.store(expiresAt: seconds, receivedAt: String(seconds.dropFirst()))
        let base = ["--store", unrefreshable, "--profile", "odd"]
        let status = try await OIDCBinary.run(["status"] + base)
        Self.expectNoTrap(status, "status")
        #expect(status.stdout.contains("expires:     0001-01-01T00:00:00Z (expired)"), "\(status.stdout)")
        Self.expectNoTrap(try await OIDCBinary.run(["status", "--output", "json"] + base), "status --output json")
        for output in ["token", "json", "id-token", "exec-credential"] {
            let result = try await OIDCBinary.run(["token", "--output", output] + base)
            Self.expectNoTrap(result, output)
            #expect(result.status == 4, "\(output): \(result.stderr)")  // needs a refresh; the login names no token endpoint
        }
        try await withTestProvider { provider in
            let store = try await Self.store(expiresAt: seconds, receivedAt: String(seconds.dropFirst()), provider: provider)
            let refreshed = try await OIDCBinary.run(["token", "--store", store, "--profile", "odd", "--output", "exec-credential", "--token-type", "access"])
            Self.expectNoTrap(refreshed, "a refresh over odd dates")
            #expect(refreshed.status == 0, "\(refreshed.stderr)")
            #expect(await provider.grantCount("refresh_token") == 1)
        }
    }

    /// Review 3, L3: a provider's `scope` holding an OSC title sequence, a screen clear and a colour
    /// reached the terminal raw in `oidc status`.
    @Test("terminal escapes in the granted scope reach neither status (text or JSON) nor token --output json raw; the JSON keeps the value")
    func scopeEscapes() async throws {
        let store = TokenCommandTests.temporaryStore()
        let scope = "openid \u{1B}]0;owned-title\u{07}\u{1B}[2J\u{1B}[31mfake-line \u{9B}31m \u{202E}gnp.exe"
        let response = try JSONSerialization.data(withJSONObject: ["access_token": "at-1", "token_type": "Bearer", "expires_in": 3600, "scope": scope])
        let inject = try await OIDCBinary.run(
            ["inject", "--store", store, "--profile", "evil", "--issuer", "https://i.example", "--client-id", "c", "--token-response", "-"],
            stdin: String(decoding: response, as: UTF8.self)
        )
        #expect(inject.status == 0, "\(inject.stderr)")
        let base = ["--store", store, "--profile", "evil"]
        func expectNoControls(_ text: String, _ what: String) {
            let unsafe = text.unicodeScalars.filter { $0 != "\n" && UntrustedText.isUnsafe($0) }
            #expect(unsafe.isEmpty, "\(what): \(unsafe.map { String($0.value, radix: 16) })")
        }
        let status = try await OIDCBinary.run(["status"] + base)
        #expect(status.status == 0, "\(status.stderr)")
        expectNoControls(status.stdout, "status")
        #expect(status.stdout.contains("scopes:      openid ?]0;owned-title??[2J?[31mfake-line ?31m ?gnp.exe"), "\(status.stdout)")
        let statusJSON = try await OIDCBinary.run(["status", "--output", "json"] + base)
        expectNoControls(statusJSON.stdout, "status --output json")
        for fastPath in ["1", "0"] {
            let json = try await OIDCBinary.run(["token", "--output", "json"] + base, environment: ["OIDC_FAST_PATH": fastPath])
            #expect(json.status == 0, "\(json.stderr)")
            expectNoControls(json.stdout, "token --output json")
            // Escaped, not changed: a JSON reader gets the scope exactly as the provider granted it.
            let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
            #expect(object["scope"] as? String == scope)
        }
    }
}
