import Foundation
import OIDC
import OIDCTesting
import OIDCTestSupport
import Testing

/// `oidc login --dpop`, `oidc token`, `oidc request` and `oidc proof` (RFC 9449), run as the built
/// binary against TestProvider with the test browser; nonces required at the token endpoint and
/// the protected resource.
@Suite("oidc login --dpop, oidc proof", .timeLimit(.scaledMinutes(2)))
struct DPoPCommandTests {
    static var configuration: TestProvider.Configuration {
        var configuration = TestProvider.Configuration()
        configuration.dpop.nonces = .required(at: [.token, .protectedResource])
        return configuration
    }

    static func json(_ text: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
    }

    /// `ath` of `token`.
    static func ath(_ token: Secret) throws -> String {
        Base64URL.encode(try LibCrypto.sha256(Array(token.revealedValue.utf8)))
    }

    @Test("login --dpop stores a DPoP-bound login with its key (remembered by the profile); token --output json says DPoP; request gets 200 through the resource's nonce challenge without a refresh; --no-dpop forgets it")
    func loginTokenRequest() async throws {
        try await withTestProvider(Self.configuration) { provider in
            let sandbox = LoginSandbox()
            let login = try await sandbox.run(LoginCommandTests.loginArguments(provider) + ["--dpop"])
            #expect(login.status == 0, "\(login.stderr)")
            let stored = try #require(try sandbox.storedLogin("work"))
            let key = try #require(stored.dpopKey)
            #expect(stored.dpopThumbprint == key.thumbprint && key.algorithm == .es256)
            #expect(stored.tokens.tokenType == "DPoP")
            let profile = try String(contentsOfFile: sandbox.profileDirectory + "/work.json", encoding: .utf8)
            #expect(profile.contains(#""dpop" : true"#), "\(profile)")
            // The token endpoint's nonce challenge, then the exchange with the login's key.
            let tokenProofs = await provider.dpopProofs(.token)
            #expect(tokenProofs.map(\.error) == ["use_dpop_nonce", nil], "\(tokenProofs.map(\.error))")
            #expect(tokenProofs.allSatisfy { $0.thumbprint == key.thumbprint })
            #expect(await provider.requestParameters(.authorize).first?["dpop_jkt"] == key.thumbprint)

            let token = try await sandbox.run(["token", "--profile", "work", "--output", "json"])
            #expect(token.status == 0, "\(token.stderr)")
            let object = try Self.json(token.stdout)
            #expect(object["token_type"] as? String == "DPoP")
            #expect(object["access_token"] as? String == stored.tokens.accessToken.revealedValue)

            // kubectl cannot prove a DPoP-bound access token: refused; the ID token is not bound, and goes.
            let kubectl = try await sandbox.run(["token", "--profile", "work", "--output", "exec-credential", "--token-type", "access"])
            #expect(kubectl.status == 2, "\(kubectl.stderr)")
            #expect(kubectl.stderr.contains("DPoP-bound") && kubectl.stdout.isEmpty, "\(kubectl.stderr)")
            let kubectlID = try await sandbox.run(["token", "--profile", "work", "--output", "exec-credential"])
            #expect(kubectlID.status == 0 && kubectlID.stdout.contains(stored.tokens.idToken?.revealedValue ?? "no id token"), "\(kubectlID.stderr)")

            let request = try await sandbox.run(["request", provider.protectedResourceURL, "--profile", "work"])
            #expect(request.status == 0, "\(request.stderr)")
            #expect(request.stderr.contains("HTTP 200"), "\(request.stderr)")
            #expect(request.stdout.contains("test-user"))
            let resource = await provider.dpopProofs(.protectedResource)
            #expect(resource.map(\.error) == ["use_dpop_nonce", nil], "\(resource.map(\.error))")
            #expect(resource.allSatisfy { $0.thumbprint == key.thumbprint && $0.claims["ath"]?.stringValue == (try? Self.ath(stored.tokens.accessToken)) })
            #expect(await provider.grantCount("refresh_token") == 0)

            let plain = try await sandbox.run(["login", "--profile", "work", "--no-dpop"])
            #expect(plain.status == 0, "\(plain.stderr)")
            let bearer = try #require(try sandbox.storedLogin("work"))
            #expect(bearer.dpopKey == nil && bearer.dpopThumbprint == nil)
            #expect(bearer.tokens.tokenType.caseInsensitiveCompare("Bearer") == .orderedSame, "\(bearer.tokens.tokenType)")
            #expect(try !String(contentsOfFile: sandbox.profileDirectory + "/work.json", encoding: .utf8).contains(#""dpop""#))
            let again = try await sandbox.run(["login", "--profile", "work"])
            #expect(again.status == 0, "\(again.stderr)")
            #expect(try sandbox.storedLogin("work")?.dpopKey == nil)
        }
    }

    @Test("proof prints a proof by the login's key: htm, htu without the query, ath of the stored token, the nonce given; the provider takes it once; --no-access-token leaves ath out; a bearer login's proof exits 2")
    func proofCommand() async throws {
        try await withTestProvider(Self.configuration) { provider in
            let sandbox = LoginSandbox()
            let login = try await sandbox.run(LoginCommandTests.loginArguments(provider) + ["--dpop"])
            #expect(login.status == 0, "\(login.stderr)")
            let stored = try #require(try sandbox.storedLogin("work"))
            let key = try #require(stored.dpopKey)
            let nonce = try #require(await provider.dpopNonce())

            let url = provider.protectedResourceURL + "?x=1"
            let printed = try await sandbox.run(["proof", "--method", "GET", "--url", url, "--profile", "work", "--nonce", nonce])
            #expect(printed.status == 0, "\(printed.stderr)")
            let proof = printed.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
            let jws = try ParsedJWS(proof)
            #expect(jws.type == "dpop+jwt" && jws.algorithm == .es256)
            let jwk = try #require(jws.header["jwk"]?.objectValue)
            try jws.verifySignature(with: try JWK(members: jwk))
            #expect(jwk == (try UnverifiedJWT(try key.proof(method: "GET", url: provider.protectedResource)).header["jwk"]?.objectValue))
            let claims = try UnverifiedJWT(proof).claims
            #expect(claims["htm"]?.stringValue == "GET")
            #expect(claims["htu"]?.stringValue == provider.protectedResourceURL)
            #expect(claims["ath"]?.stringValue == (try Self.ath(stored.tokens.accessToken)))
            #expect(claims["nonce"]?.stringValue == nonce)

            // The provider takes it, with the stored token, once.
            var request = HTTPRequest(url: try #require(URL(string: url)))
            request.headers.set("Authorization", "DPoP " + stored.tokens.accessToken.revealedValue)
            request.headers.set("DPoP", proof)
            #expect(try await NIOHTTPTransport.shared.send(request, options: HTTPRequestOptions()).status == 200)
            let replay = try await NIOHTTPTransport.shared.send(request, options: HTTPRequestOptions())
            #expect(replay.status == 401 && replay.headers["WWW-Authenticate"]?.contains("invalid_dpop_proof") == true)

            let lower = try await sandbox.run(["proof", "--method", "post", "--url", provider.tokenEndpoint, "--profile", "work", "--no-access-token"])
            #expect(lower.status == 0, "\(lower.stderr)")
            let tokenClaims = try UnverifiedJWT(lower.stdout.trimmingCharacters(in: .whitespacesAndNewlines)).claims
            #expect(Set(tokenClaims.keys) == ["jti", "htm", "htu", "iat"])
            #expect(tokenClaims["htm"]?.stringValue == "POST" && tokenClaims["htu"]?.stringValue == provider.tokenEndpoint)

            // A server's nonce is opaque and may start with a dash, as a random base64url value does one
            // time in 64; with a v or an h in it, it is not read as -v or -h (help), wherever it stands.
            for dashed in ["-x_Nonce", "-Qv9hZ3kL", "-vh"] {
                let dashFirst = try await sandbox.run(["proof", "--method", "GET", "--nonce", dashed, "--url", url, "--profile", "work"])
                #expect(dashFirst.status == 0, "\(dashed): \(dashFirst.stderr)")
                #expect(try UnverifiedJWT(dashFirst.stdout.trimmingCharacters(in: .whitespacesAndNewlines)).claims["nonce"]?.stringValue == dashed)
            }
            // An option after --nonce is not its value: an empty, unquoted $NONCE is a usage error.
            let noValue = try await sandbox.run(["proof", "--method", "GET", "--url", url, "--profile", "work", "--nonce", "--no-nonce"])
            #expect(noValue.status == 2 && noValue.stdout.isEmpty, "\(noValue.stderr)")

            let badNonce = try await sandbox.run(["proof", "--method", "GET", "--url", url, "--profile", "work", "--nonce", "a\"b"])
            #expect(badNonce.status == 2, "\(badNonce.stderr)")
            #expect(badNonce.stdout.isEmpty)

            let bearer = try await sandbox.run(LoginCommandTests.loginArguments(provider, profile: "plain"))
            #expect(bearer.status == 0, "\(bearer.stderr)")
            #expect(try sandbox.storedLogin("plain")?.dpopThumbprint == nil)
            let refused = try await sandbox.run(["proof", "--method", "GET", "--url", url, "--profile", "plain"])
            #expect(refused.status == 2, "\(refused.stderr)")
            #expect(refused.stdout.isEmpty)
            #expect(refused.stderr.contains("--dpop"), "\(refused.stderr)")
        }
    }

    @Test("proof for a DPoP-bound login whose key is lost exits 2, as documented, saying to log in again; nothing on stdout")
    func proofWithoutItsKey() async throws {
        try await withTestProvider(Self.configuration) { provider in
            let sandbox = LoginSandbox()
            let login = try await sandbox.run(LoginCommandTests.loginArguments(provider) + ["--dpop"])
            #expect(login.status == 0, "\(login.stderr)")
            var stored = try #require(try sandbox.storedLogin("work"))
            #expect(stored.isDPoPBound)
            stored.dpopKey = nil
            let lost = stored
            let keychain = try FileKeychain(directory: URL(fileURLWithPath: sandbox.store))
            let key = TokenStoreKey(service: "oidc", account: "work")
            try await keychain.withLock(key) { try keychain.save(lost, for: key) }
            let refused = try await sandbox.run(["proof", "--method", "GET", "--url", provider.protectedResourceURL, "--profile", "work"])
            #expect(refused.status == 2, "\(refused.stderr)")
            #expect(refused.stdout.isEmpty)
            #expect(refused.stderr.contains("missing") && refused.stderr.contains("Log in again"), "\(refused.stderr)")
        }
    }

    /// The nonce claim of the proof `oidc proof` printed, `nil` when it has none.
    static func nonce(ofProof result: CommandResult) throws -> String? {
        try UnverifiedJWT(result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)).claims["nonce"]?.stringValue
    }

    @Test("proof after request carries the nonce the resource gave request (another process), so curl's first try is taken; --nonce overrides it, --no-nonce leaves it out; the next request starts with it")
    func proofRemembersTheResourceNonce() async throws {
        try await withTestProvider(Self.configuration) { provider in
            let sandbox = LoginSandbox()
            let login = try await sandbox.run(LoginCommandTests.loginArguments(provider) + ["--dpop"])
            #expect(login.status == 0, "\(login.stderr)")
            let url = provider.protectedResourceURL
            // Nothing remembered yet: the proof has no nonce.
            let before = try await sandbox.run(["proof", "--method", "GET", "--url", url, "--profile", "work"])
            #expect(before.status == 0, "\(before.stderr)")
            #expect(try Self.nonce(ofProof: before) == nil)

            try await provider.rotateDPoPNonce()
            let request = try await sandbox.run(["request", url, "--profile", "work"])
            #expect(request.status == 0, "\(request.stderr)")
            #expect(await provider.dpopProofs(.protectedResource).map(\.error) == ["use_dpop_nonce", nil])
            let nonce = try #require(await provider.dpopNonce())

            let printed = try await sandbox.run(["proof", "--method", "GET", "--url", url + "?page=2", "--profile", "work"])
            #expect(printed.status == 0, "\(printed.stderr)")
            #expect(try Self.nonce(ofProof: printed) == nonce)
            // As curl would send it: taken at once, no use_dpop_nonce first.
            let stored = try #require(try sandbox.storedLogin("work"))
            var call = HTTPRequest(url: try #require(URL(string: url + "?page=2")))
            call.headers.set("Authorization", "DPoP " + stored.tokens.accessToken.revealedValue)
            call.headers.set("DPoP", printed.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
            #expect(try await NIOHTTPTransport.shared.send(call, options: HTTPRequestOptions()).status == 200)

            let given = try await sandbox.run(["proof", "--method", "GET", "--url", url, "--profile", "work", "--nonce", "given-nonce"])
            #expect(try Self.nonce(ofProof: given) == "given-nonce")
            let none = try await sandbox.run(["proof", "--method", "GET", "--url", url, "--profile", "work", "--no-nonce"])
            #expect(none.status == 0, "\(none.stderr)")
            #expect(try Self.nonce(ofProof: none) == nil)
            let both = try await sandbox.run(["proof", "--method", "GET", "--url", url, "--profile", "work", "--no-nonce", "--nonce", "x"])
            #expect(both.status == 2, "\(both.stderr)")
            // Another origin (the same host, another port) has no nonce remembered.
            let elsewhere = try await sandbox.run(["proof", "--method", "GET", "--url", "http://127.0.0.1:9/api", "--profile", "work"])
            #expect(try Self.nonce(ofProof: elsewhere) == nil)

            // The next request starts with the remembered nonce: no challenge this time.
            let again = try await sandbox.run(["request", url, "--profile", "work"])
            #expect(again.status == 0, "\(again.stderr)")
            #expect(await provider.dpopProofs(.protectedResource).map(\.error) == ["use_dpop_nonce", nil, nil, nil])
            // Kept in the store, whose files no one else may read.
            for file in sandbox.files() where file.path.hasPrefix(sandbox.store + "/") {
                #expect(file.mode & 0o077 == 0, "\(file.path) \(String(file.mode, radix: 8))")
            }
        }
    }

    @Test("at most the 16 most recently changed origins are remembered: a new one pushes out the oldest")
    func rememberedNoncesAreBounded() async throws {
        try await withTestProvider(Self.configuration) { provider in
            let sandbox = LoginSandbox()
            let login = try await sandbox.run(LoginCommandTests.loginArguments(provider) + ["--dpop"])
            #expect(login.status == 0, "\(login.stderr)")
            // Sixteen origins remembered already (as sixteen earlier requests would leave them), oldest first.
            let keychain = try FileKeychain(directory: URL(fileURLWithPath: sandbox.store))
            let key = TokenStoreKey(service: "oidc", account: "work")
            var stored = try #require(try keychain.load(key))
            let earlier = (1...16).map { OAuthParameter("https://api\($0).example:443", "nonce-\($0)") }
            stored.attributes["dpop_nonces"] = FormEncoding.encode(earlier)
            try keychain.save(stored, for: key)
            let second = try await sandbox.run(["proof", "--method", "GET", "--url", "https://api2.example/x", "--profile", "work"])
            #expect(try Self.nonce(ofProof: second) == "nonce-2")

            let request = try await sandbox.run(["request", provider.protectedResourceURL, "--profile", "work"])
            #expect(request.status == 0, "\(request.stderr)")
            let kept = try FormEncoding.decode(Substring(try #require(try keychain.load(key)?.attributes["dpop_nonces"])))
            #expect(kept.count == 16)
            #expect(kept.map(\.name) == (2...16).map { "https://api\($0).example:443" } + [try #require(URL(string: provider.issuer)).absoluteString])
            let oldest = try await sandbox.run(["proof", "--method", "GET", "--url", "https://api1.example/x", "--profile", "work"])
            #expect(try Self.nonce(ofProof: oldest) == nil)
            let newest = try await sandbox.run(["proof", "--method", "GET", "--url", provider.protectedResourceURL, "--profile", "work"])
            let current = try #require(await provider.dpopNonce())
            #expect(try Self.nonce(ofProof: newest) == current)
        }
    }
}
