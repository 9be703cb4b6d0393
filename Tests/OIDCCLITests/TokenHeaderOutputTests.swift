import Foundation
import OIDC
import OIDCTesting
import OIDCTestSupport
import Testing

/// `oidc token --output header`: one line, `Authorization: Bearer TOKEN` (or `DPoP`), for hosts that
/// run a header helper command; run as the built binary against TestProvider, and the line sent as
/// it is to the provider's protected resource.
@Suite("oidc token --output header", .timeLimit(.scaledMinutes(2)))
struct TokenHeaderOutputTests {
    /// Sends `lines` (`Name: value` each) to `url` as they are, as a host sends a helper's output.
    static func status(of url: String, headerLines lines: [String]) async throws -> Int {
        var headers = HTTPHeaders()
        for line in lines {
            let colon = try #require(line.firstIndex(of: ":"))
            headers.add(String(line[..<colon]), String(line[line.index(after: colon)...].dropFirst()))
        }
        return try await withNIOHTTPTransport { transport in
            try await transport.send(HTTPRequest(url: try #require(URL(string: url)), headers: headers)).status
        }
    }

    @Test("a bearer login prints exactly one line that the API takes, from the store (the fast path and the parser alike) and after a refresh")
    func bearerLine() async throws {
        try await withTestProvider { provider in
            let store = TokenCommandTests.temporaryStore()
            let tokens = try await TokenCommandTests.inject(provider, store: store, expiresIn: 3600)
            let arguments = ["token", "--store", store, "--profile", "work", "--output", "header"]
            let expected = "Authorization: Bearer \(tokens.accessToken.revealedValue)\n"
            // OIDC_FAST_PATH=require exits 98 unless the shortcut answered.
            let fast = try await OIDCBinary.run(arguments, environment: ["OIDC_FAST_PATH": "require"])
            let parsed = try await OIDCBinary.run(arguments, environment: ["OIDC_FAST_PATH": "0"])
            let equalsForm = try await OIDCBinary.run(["token", "--store=\(store)", "--profile=work", "--output=header"])
            for result in [fast, parsed, equalsForm] {
                #expect(result.status == 0, "\(result.stderr)")
                #expect(result.stdout == expected)
                #expect(result.stderr.isEmpty, "\(result.stderr)")
            }
            #expect(try await Self.status(of: provider.protectedResourceURL, headerLines: [String(fast.stdout.dropLast())]) == 200)

            let forced = try await OIDCBinary.run(arguments + ["--force-refresh"])
            #expect(forced.status == 0, "\(forced.stderr)")
            #expect(await provider.grantCount("refresh_token") == 1)
            let stored = try #require(try FileKeychain(directory: URL(fileURLWithPath: store)).load(TokenStoreKey(service: "oidc", account: "work")))
            #expect(forced.stdout == "Authorization: Bearer \(stored.tokens.accessToken.revealedValue)\n")
            #expect(forced.stdout != expected)
            #expect(forced.stdout.filter { $0 == "\n" }.count == 1)
            #expect(try await Self.status(of: provider.protectedResourceURL, headerLines: [String(forced.stdout.dropLast())]) == 200)
        }
    }

    @Test("the scheme is Bearer whatever case the provider wrote token_type in; a token that cannot stand in a header line exits 4 and prints nothing; --token-type is for exec-credential only")
    func schemeAndRefusals() async throws {
        let store = TokenCommandTests.temporaryStore()
        func inject(_ response: String, profile: String) async throws {
            let result = try await OIDCBinary.run(
                ["inject", "--store", store, "--profile", profile, "--issuer", "https://login.example.com", "--client-id", "c", "--token-response", "-",
                 "--expires-in=3600"],
                stdin: response
            )
            #expect(result.status == 0, "\(result.stderr)")
        }
        try await inject(#"{"access_token":"lower-case.type_~+/=","token_type":"bearer"}"#, profile: "lower")
        let lower = try await OIDCBinary.run(["token", "--store", store, "--profile", "lower", "--output", "header"])
        #expect(lower.status == 0 && lower.stdout == "Authorization: Bearer lower-case.type_~+/=\n", "\(lower.stderr)")

        // RFC 6749's VSCHAR lets a space into a token response; a header line cannot hold one.
        try await inject(#"{"access_token":"two words","token_type":"Bearer"}"#, profile: "spaced")
        for fastPath in ["1", "0"] {
            let spaced = try await OIDCBinary.run(["token", "--store", store, "--profile", "spaced", "--output", "header"], environment: ["OIDC_FAST_PATH": fastPath])
            #expect(spaced.status == 4, "\(spaced.stderr)")
            #expect(spaced.stdout.isEmpty)
            #expect(spaced.stderr.contains("U+0020") && spaced.stderr.contains("profile 'spaced'"), "\(spaced.stderr)")
            #expect(!spaced.stderr.contains("two words"))
        }

        let usage = try await OIDCBinary.run(["token", "--store", store, "--profile", "lower", "--output", "header", "--token-type", "access"])
        #expect(usage.status == 2 && usage.stdout.isEmpty, "\(usage.stderr)")
        let nobody = try await OIDCBinary.run(["token", "--store", store, "--profile", "nobody", "--output", "header"])
        #expect(nobody.status == 4 && nobody.stdout.isEmpty, "\(nobody.stderr)")
    }

    @Test("a DPoP-bound login prints Authorization: DPoP TOKEN and a note on stderr; the line alone is refused, with oidc proof's DPoP line the API takes it")
    func dpopLine() async throws {
        try await withTestProvider { provider in
            let sandbox = LoginSandbox()
            let login = try await sandbox.run(LoginCommandTests.loginArguments(provider) + ["--dpop"])
            #expect(login.status == 0, "\(login.stderr)")
            let stored = try #require(try sandbox.storedLogin("work"))
            let header = try await sandbox.run(["token", "--profile", "work", "--output", "header"])
            #expect(header.status == 0, "\(header.stderr)")
            #expect(header.stdout == "Authorization: DPoP \(stored.tokens.accessToken.revealedValue)\n")
            #expect(header.stderr.contains("DPoP-bound") && header.stderr.contains("oidc proof --profile work"), "\(header.stderr)")
            LoginCommandTests.expectNoSecret(header.stderr, stored.tokens, "the note")
            let line = String(header.stdout.dropLast())
            #expect(try await Self.status(of: provider.protectedResourceURL, headerLines: [line]) == 401)
            let proof = try await sandbox.run(["proof", "--profile", "work", "--method", "GET", "--url", provider.protectedResourceURL])
            #expect(proof.status == 0, "\(proof.stderr)")
            let withProof = [line, "DPoP: " + proof.stdout.trimmingCharacters(in: .whitespacesAndNewlines)]
            #expect(try await Self.status(of: provider.protectedResourceURL, headerLines: withProof) == 200)
        }
    }
}
