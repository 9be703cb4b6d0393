import Foundation
@testable import OIDC
import OIDCTesting
import OIDCTestSupport
import Testing

/// DPoP (RFC 9449) through the relying party, the token client and the session, over real
/// loopback HTTP against TestProvider: what was sent is read back from the provider's records.
@Suite("DPoP: relying party, token client and session against TestProvider", .timeLimit(.scaledMinutes(1)))
struct DPoPTests {
    static let redirectURI = "http://127.0.0.1:9/callback"
    static let storeKey = TokenStoreKey(service: "dpop-tests", account: "user")
    static let server = TestProvider.Client.confidential(
        id: "server", secret: "server-secret-server-secret-32-b", redirectURIs: [redirectURI])

    static func configuration(
        _ dpop: TestProvider.DPoP = .init(), clients: [TestProvider.Client] = [.default, server]
    ) -> TestProvider.Configuration {
        var configuration = TestProvider.Configuration(clients: clients)
        configuration.dpop = dpop
        return configuration
    }

    static func nonces(at endpoints: Set<TestProvider.Endpoint>, rotatingAfter uses: Int? = nil) -> TestProvider.DPoP {
        TestProvider.DPoP(nonces: .required(at: endpoints, rotatingAfter: uses))
    }

    /// The query of `url` by name.
    static func query(_ url: URL) throws -> [String: String] {
        let items = try #require(URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems)
        return Dictionary(items.map { ($0.name, $0.value ?? "") }) { first, _ in first }
    }

    /// A code login by `rp` (the provider signs the user in without a page): the request and the login.
    static func login(_ rp: RelyingParty) async throws -> (request: AuthorizationRequest, login: VerifiedLogin) {
        let request = try rp.authorizationRequest(redirectURI: Self.redirectURI)
        let url = try await rp.authorizationURL(for: request)
        let login = try await rp.completeLogin(callback: try await RelyingPartyTests.callback(for: url, rp.transport), for: request)
        return (request, login)
    }

    static func dpopRelyingParty(
        _ provider: TestProvider, client: TestProvider.Client = .default, use: DPoPUse = .on,
        transport: any HTTPTransport = NIOHTTPTransport.shared
    ) async throws -> RelyingParty {
        var rp = try await provider.relyingParty(client: client, transport: transport)
        rp.dpop = use
        return rp
    }

    /// `ath` of `token`: base64url(SHA-256(token)).
    static func ath(_ token: Secret) throws -> String {
        Base64URL.encode(try LibCrypto.sha256(Array(token.revealedValue.utf8)))
    }

    // MARK: - Code login

    @Test("a code login with dpop = .on: dpop_jkt at /authorize is the key's thumbprint; the token is DPoP, bound to that key (cnf.jkt, refused as a bearer token); keep stores the key")
    func codeLogin() async throws {
        try await withTestProvider(Self.configuration()) { provider in
            let rp = try await Self.dpopRelyingParty(provider, client: Self.server)
            let request = try rp.authorizationRequest(redirectURI: Self.redirectURI)
            let key = try #require(request.dpopKey)
            #expect(key.algorithm == .es256)
            let url = try await rp.authorizationURL(for: request)
            #expect(try Self.query(url)["dpop_jkt"] == key.thumbprint)
            let login = try await rp.completeLogin(callback: try await RelyingPartyTests.callback(for: url, rp.transport), for: request)
            #expect(await provider.requestParameters(.authorize).first?["dpop_jkt"] == key.thumbprint)

            #expect(login.tokens.tokenType == "DPoP")
            #expect(login.dpopKey == key)
            let proofs = await provider.dpopProofs(.token)
            #expect(proofs.count == 1 && proofs.allSatisfy(\.isAccepted), "\(proofs.map(\.error))")
            #expect(proofs.first?.thumbprint == key.thumbprint)
            #expect(proofs.first?.claims["htm"]?.stringValue == "POST" && proofs.first?.claims["htu"]?.stringValue == provider.tokenEndpoint)
            #expect(proofs.first?.claims["ath"] == nil, "no access token at the token endpoint")

            let introspection = try await rp.tokenClient.introspect(login.tokens.accessToken)
            #expect(introspection.active)
            #expect(introspection.raw["cnf"]?.objectValue?["jkt"]?.stringValue == key.thumbprint)
            #expect(introspection.raw["token_type"]?.stringValue == "DPoP")
            // Bound: the token alone, as a bearer token, is refused.
            var bearer = HTTPRequest(url: provider.protectedResource)
            bearer.headers.set("Authorization", "Bearer " + login.tokens.accessToken.revealedValue)
            #expect(try await rp.transport.send(bearer, options: HTTPRequestOptions()).status == 401)

            let store = InMemoryTokenStore()
            let session = try await rp.keep(login, in: store, as: Self.storeKey, allowlist: .default(for: provider.protectedResource))
            let stored = try #require(await store.load(Self.storeKey))
            #expect(stored.dpopKey == key && stored.dpopThumbprint == key.thumbprint)
            let response = try await session.send(HTTPRequest(url: provider.protectedResource))
            #expect(response.status == 200, "\(String(decoding: response.body, as: UTF8.self))")
            let resource = await provider.dpopProofs(.protectedResource)
            #expect(resource.count == 1 && resource.first?.isAccepted == true && resource.first?.thumbprint == key.thumbprint)
        }
    }

    @Test("nonces required at the token endpoint: exactly one 400 use_dpop_nonce, then 200 with the nonce; the code was not spent by the challenge")
    func tokenEndpointNonce() async throws {
        try await withTestProvider(Self.configuration(Self.nonces(at: [.token]))) { provider in
            let recorder = ExchangeRecorder()
            let rp = try await Self.dpopRelyingParty(provider, transport: recorder)
            let (request, login) = try await Self.login(rp)
            #expect(login.tokens.tokenType == "DPoP" && login.dpopKey == request.dpopKey)

            let tokenEndpoint = try #require(rp.provider.tokenEndpoint)
            #expect(recorder.exchanges(to: tokenEndpoint).map(\.status) == [400, 200])
            let proofs = await provider.dpopProofs(.token)
            #expect(proofs.map(\.error) == ["use_dpop_nonce", nil])
            #expect(proofs.first?.claims["nonce"] == nil)
            let nonce = await provider.dpopNonce()
            #expect(nonce != nil && proofs.last?.claims["nonce"]?.stringValue == nonce)
            #expect(proofs.first?.claims["jti"] != proofs.last?.claims["jti"])
            // The same code in both requests, redeemed by the second.
            let codes = await provider.tokenRequestParameters().map { $0["code"] }
            #expect(codes.count == 2 && codes[0] != nil && codes[0] == codes[1])
            #expect(await provider.grantCount("authorization_code") == 2)
        }
    }

    @Test("nonces required at the protected resource: one challenge, one retry, 200, and no token request for it")
    func resourceNonce() async throws {
        try await withTestProvider(Self.configuration(Self.nonces(at: [.protectedResource]))) { provider in
            let rp = try await Self.dpopRelyingParty(provider)
            let (_, login) = try await Self.login(rp)
            let session = try await rp.keep(login, in: InMemoryTokenStore(), as: Self.storeKey, allowlist: .default(for: provider.protectedResource))
            let tokenRequests = await provider.requestCount(.token)
            let response = try await session.send(HTTPRequest(url: provider.protectedResource))
            #expect(response.status == 200)
            let proofs = await provider.dpopProofs(.protectedResource)
            #expect(proofs.map(\.error) == ["use_dpop_nonce", nil])
            let nonce = await provider.dpopNonce()
            #expect(proofs.first?.claims["nonce"] == nil && nonce != nil && proofs.last?.claims["nonce"]?.stringValue == nonce)
            #expect(await provider.requestCount(.protectedResource) == 2)
            #expect(await provider.requestCount(.token) == tokenRequests)
            #expect(await provider.grantCount("refresh_token") == 0)
        }
    }

    @Test("a nonce rotating after 2 uses: the new nonce comes on a 200 and is used at once, no further challenge; a rotation on the provider's own schedule costs one challenge and one retry, never a refresh")
    func resourceNonceRotation() async throws {
        try await withTestProvider(Self.configuration(Self.nonces(at: [.protectedResource], rotatingAfter: 2))) { provider in
            let rp = try await Self.dpopRelyingParty(provider)
            let (_, login) = try await Self.login(rp)
            let session = try await rp.keep(login, in: InMemoryTokenStore(), as: Self.storeKey, allowlist: .default(for: provider.protectedResource))
            for _ in 0..<6 {
                #expect(try await session.send(HTTPRequest(url: provider.protectedResource)).status == 200)
            }
            var proofs = await provider.dpopProofs(.protectedResource)
            #expect(proofs.map(\.error) == ["use_dpop_nonce", nil, nil, nil, nil, nil, nil])
            let used = proofs.filter(\.isAccepted).compactMap { $0.claims["nonce"]?.stringValue }
            #expect(used.count == 6 && Set(used).count == 3, "two uses of each of three nonces: \(used)")

            try await provider.rotateDPoPNonce()
            #expect(try await session.send(HTTPRequest(url: provider.protectedResource)).status == 200)
            proofs = await provider.dpopProofs(.protectedResource)
            #expect(proofs.dropFirst(7).map(\.error) == ["use_dpop_nonce", nil])
            #expect(await provider.requestCount(.protectedResource) == 9)
            #expect(await provider.grantCount("refresh_token") == 0)
        }
    }

    @Test("every proof has its own jti; htu leaves the query out; ath is the token's hash; a proof sent again is refused by the provider (401 invalid_dpop_proof)")
    func proofClaimsAndReplay() async throws {
        try await withTestProvider(Self.configuration()) { provider in
            let rp = try await Self.dpopRelyingParty(provider)
            let (_, login) = try await Self.login(rp)
            let session = try await rp.keep(login, in: InMemoryTokenStore(), as: Self.storeKey, allowlist: .default(for: provider.protectedResource))
            let withQuery = try #require(URL(string: provider.protectedResourceURL + "?x=1"))
            for _ in 0..<3 {
                #expect(try await session.send(HTTPRequest(url: withQuery)).status == 200)
            }
            let resource = await provider.dpopProofs(.protectedResource)
            #expect(resource.count == 3 && resource.allSatisfy(\.isAccepted), "\(resource.map(\.error))")
            let all = await provider.dpopProofs(.token) + resource
            let ids = all.compactMap { $0.claims["jti"]?.stringValue }
            #expect(ids.count == 4 && Set(ids).count == 4)
            let ath = try Self.ath(login.tokens.accessToken)
            for proof in resource {
                #expect(proof.claims["htu"]?.stringValue == provider.protectedResourceURL)
                #expect(proof.claims["htm"]?.stringValue == "GET")
                #expect(proof.claims["ath"]?.stringValue == ath)
                #expect(proof.header["typ"]?.stringValue == "dpop+jwt")
            }

            // The last proof again, by hand: the provider remembers its jti.
            let replayed = try #require(resource.last?.compact)
            var request = HTTPRequest(url: withQuery)
            request.headers.set("Authorization", "DPoP " + login.tokens.accessToken.revealedValue)
            request.headers.set("DPoP", replayed)
            let response = try await NIOHTTPTransport.shared.send(request, options: HTTPRequestOptions())
            #expect(response.status == 401)
            #expect(response.headers["WWW-Authenticate"]?.contains("invalid_dpop_proof") == true, "\(response.headers)")
            #expect(await provider.dpopProofs(.protectedResource).last?.error == "invalid_dpop_proof")
        }
    }

    // MARK: - Refresh and the stored key

    @Test("refreshNow proves the login's key and brings a DPoP token; the session goes on with it")
    func refreshWithLoginKey() async throws {
        try await withTestProvider(Self.configuration()) { provider in
            let rp = try await Self.dpopRelyingParty(provider)
            let (request, login) = try await Self.login(rp)
            let key = try #require(request.dpopKey)
            let store = InMemoryTokenStore()
            let session = try await rp.keep(login, in: store, as: Self.storeKey, allowlist: .default(for: provider.protectedResource))
            let refreshed = try await session.refreshNow()
            #expect(refreshed.tokenType == "DPoP")
            #expect(refreshed.accessToken != login.tokens.accessToken)
            #expect(await provider.grantCount("refresh_token") == 1)
            let proofs = await provider.dpopProofs(.token)
            #expect(proofs.count == 2 && proofs.allSatisfy(\.isAccepted) && proofs.allSatisfy { $0.thumbprint == key.thumbprint })
            #expect(await store.load(Self.storeKey)?.dpopKey == key)
            #expect(try await session.send(HTTPRequest(url: provider.protectedResource)).status == 200)
            let resource = await provider.dpopProofs(.protectedResource)
            #expect(resource.last?.claims["ath"]?.stringValue == (try Self.ath(refreshed.accessToken)))
        }
    }

    /// What is done to the stored login's key before the session uses it.
    enum KeyChange: String, CaseIterable, CustomTestStringConvertible {
        /// The key is gone (`dpopKey = nil`); the tokens are still of type DPoP.
        case removed
        /// Another key where the login's was, the thumbprint still that of the bound key (a store
        /// edited or mixed up: what a file whose `key` does not match its `jkt` loads as).
        case replaced
        var testDescription: String { rawValue }
    }

    @Test("a DPoP-bound login whose key is removed, or replaced by another: send throws notLoggedIn, nothing reaches the resource or the token endpoint", arguments: KeyChange.allCases)
    func missingOrForeignKey(_ change: KeyChange) async throws {
        try await withTestProvider(Self.configuration()) { provider in
            let rp = try await Self.dpopRelyingParty(provider)
            let (request, login) = try await Self.login(rp)
            let key = try #require(request.dpopKey)
            let store = InMemoryTokenStore()
            let session = try await rp.keep(login, in: store, as: Self.storeKey, allowlist: .default(for: provider.protectedResource))
            var stored = try #require(await store.load(Self.storeKey))
            switch change {
            case .removed:
                stored.dpopKey = nil
            case .replaced:
                stored.dpopKey = try DPoPKey.generate()
                stored.dpopThumbprint = key.thumbprint
            }
            await store.save(stored, for: Self.storeKey)
            await provider.resetCounters()

            let error = await #expect(throws: OIDCError.self) { try await session.send(HTTPRequest(url: provider.protectedResource)) }
            #expect(error?.code == .notLoggedIn, "\(String(describing: error))")
            #expect(error?.message.contains("Log in again") == true)
            #expect(error?.context["dpop"] == (change == .removed ? "key-missing" : "key-mismatch"))
            #expect(await provider.requestCount(.protectedResource) == 0)
            #expect(await provider.requestCount(.token) == 0)
            // The login is kept, untouched.
            #expect(await store.load(Self.storeKey) == stored)
        }
    }

    @Test("a key set through the public API moves the thumbprint with it: the provider, not the library, refuses the other key's proofs, and the session ends in an error, not a success")
    func keySwappedThroughPublicAPI() async throws {
        try await withTestProvider(Self.configuration()) { provider in
            let rp = try await Self.dpopRelyingParty(provider)
            let (_, login) = try await Self.login(rp)
            let store = InMemoryTokenStore()
            let session = try await rp.keep(login, in: store, as: Self.storeKey, allowlist: .default(for: provider.protectedResource))
            var stored = try #require(await store.load(Self.storeKey))
            let other = try DPoPKey.generate()
            stored.dpopKey = other
            #expect(stored.dpopThumbprint == other.thumbprint)
            await store.save(stored, for: Self.storeKey)
            await #expect(throws: OIDCError.self) { try await session.send(HTTPRequest(url: provider.protectedResource)) }
            let resource = await provider.dpopProofs(.protectedResource)
            #expect(!resource.isEmpty && resource.allSatisfy { !$0.isAccepted && $0.thumbprint == other.thumbprint })
        }
    }

    // MARK: - Downgrade, PAR, client credentials

    @Test("a token response downgraded to Bearer: completeLogin throws senderConstraintMissing, a security error")
    func downgradeToBearer() async throws {
        try await withTestProvider(Self.configuration()) { provider in
            let rp = try await Self.dpopRelyingParty(provider)
            let request = try rp.authorizationRequest(redirectURI: Self.redirectURI)
            let url = try await rp.authorizationURL(for: request)
            let callback = try await RelyingPartyTests.callback(for: url, rp.transport)
            await provider.failNextTokenRequests(1, with: .downgradeToBearer)
            let error = await #expect(throws: OIDCError.self) { try await rp.completeLogin(callback: callback, for: request) }
            #expect(error?.code == .senderConstraintMissing, "\(String(describing: error))")
            #expect(error?.category == .security)
            #expect(await provider.requestCount(.token) == 1)
        }
    }

    @Test("PAR and DPoP together: the push carries a proof by the login's key and dpop_jkt; the login completes bound to the key")
    func pushedWithDPoP() async throws {
        var configuration = Self.configuration()
        configuration.pushedAuthorizationRequests = .offered
        try await withTestProvider(configuration) { provider in
            var rp = try await Self.dpopRelyingParty(provider)
            rp.pushedAuthorization = .always
            let request = try rp.authorizationRequest(redirectURI: Self.redirectURI)
            let key = try #require(request.dpopKey)
            let url = try await rp.authorizationURL(for: request)
            #expect(Set(try Self.query(url).keys) == ["client_id", "request_uri"])
            let pushes = await provider.dpopProofs(.pushedAuthorization)
            #expect(pushes.count == 1 && pushes.first?.isAccepted == true, "\(pushes.map(\.error))")
            #expect(pushes.first?.thumbprint == key.thumbprint)
            #expect(pushes.first?.claims["htm"]?.stringValue == "POST" && pushes.first?.claims["htu"]?.stringValue == provider.issuer + "/par")
            #expect(await provider.requestParameters(.pushedAuthorization).first?["dpop_jkt"] == key.thumbprint)

            let login = try await rp.completeLogin(callback: try await RelyingPartyTests.callback(for: url, rp.transport), for: request)
            #expect(login.tokens.tokenType == "DPoP" && login.dpopKey == key)
        }
    }

    @Test("nonces required at the pushed authorization endpoint: one 400 use_dpop_nonce, one retry with the nonce, one request URI")
    func pushedNonce() async throws {
        var configuration = Self.configuration(Self.nonces(at: [.pushedAuthorization]))
        configuration.pushedAuthorizationRequests = .required
        try await withTestProvider(configuration) { provider in
            let rp = try await Self.dpopRelyingParty(provider)
            let (request, login) = try await Self.login(rp)
            let pushes = await provider.dpopProofs(.pushedAuthorization)
            #expect(pushes.map(\.error) == ["use_dpop_nonce", nil])
            let nonce = await provider.dpopNonce()
            #expect(pushes.first?.claims["nonce"] == nil && nonce != nil && pushes.last?.claims["nonce"]?.stringValue == nonce)
            #expect(pushes.allSatisfy { $0.thumbprint == request.dpopKey?.thumbprint })
            #expect(await provider.requestCount(.pushedAuthorization) == 2)
            #expect(await provider.requestCount(.authorize) == 1)
            #expect(login.tokens.tokenType == "DPoP" && login.dpopKey == request.dpopKey)
        }
    }

    @Test("client credentials: a DPoP service session gets a DPoP token bound to a key its stored login keeps")
    func serviceSession() async throws {
        try await withTestProvider(Self.configuration()) { provider in
            let rp = try await Self.dpopRelyingParty(provider, client: Self.server)
            let store = InMemoryTokenStore()
            let session = rp.serviceSession(allowlist: .default(for: provider.protectedResource), store: store, key: Self.storeKey)
            let tokens = try await session.validTokens()
            #expect(tokens.tokenType == "DPoP")
            let stored = try #require(await store.load(Self.storeKey))
            let key = try #require(stored.dpopKey)
            #expect(stored.dpopThumbprint == key.thumbprint)
            let proofs = await provider.dpopProofs(.token)
            #expect(proofs.count == 1 && proofs.first?.isAccepted == true && proofs.first?.thumbprint == key.thumbprint)
            let introspection = try await rp.tokenClient.introspect(tokens.accessToken)
            #expect(introspection.raw["cnf"]?.objectValue?["jkt"]?.stringValue == key.thumbprint)
            #expect(await provider.grantCount("client_credentials") == 1)
        }
    }

    // MARK: - Algorithms

    @Test("newKeyPerLogin with PS256 and EdDSA: proofs of that algorithm, DPoP tokens, a session that works", arguments: [JWSAlgorithm.ps256, .edDSA])
    func otherAlgorithms(_ algorithm: JWSAlgorithm) async throws {
        try await withTestProvider(Self.configuration()) { provider in
            let rp = try await Self.dpopRelyingParty(provider, use: .newKeyPerLogin(algorithm))
            let (request, login) = try await Self.login(rp)
            let key = try #require(request.dpopKey)
            #expect(key.algorithm == algorithm)
            #expect(login.tokens.tokenType == "DPoP")
            let proofs = await provider.dpopProofs(.token)
            #expect(proofs.count == 1 && proofs.first?.isAccepted == true && proofs.first?.header["alg"]?.stringValue == algorithm.rawValue)
            let session = try await rp.keep(login, in: InMemoryTokenStore(), as: Self.storeKey, allowlist: .default(for: provider.protectedResource))
            #expect(try await session.send(HTTPRequest(url: provider.protectedResource)).status == 200)
        }
    }

    @Test("a provider whose proof algorithms leave out ES256: makeDPoPKey and authorizationRequest throw invalidArgument before anything is sent; a key it takes works")
    func algorithmNotTaken() async throws {
        try await withTestProvider(Self.configuration(TestProvider.DPoP(algorithms: [.ps256]))) { provider in
            var rp = try await Self.dpopRelyingParty(provider)
            #expect(rp.provider.dpopSigningAlgorithms == ["PS256"])
            await provider.resetCounters()
            let made = #expect(throws: OIDCError.self) { try rp.makeDPoPKey() }
            #expect(made?.code == .invalidArgument && made?.message.contains("PS256") == true, "\(String(describing: made))")
            let asked = #expect(throws: OIDCError.self) { try rp.authorizationRequest(redirectURI: Self.redirectURI) }
            #expect(asked?.code == .invalidArgument)
            for endpoint in TestProvider.Endpoint.allCases {
                #expect(await provider.requestCount(endpoint) == 0, "\(endpoint)")
            }
            rp.dpop = .newKeyPerLogin(.ps256)
            #expect(try rp.makeDPoPKey()?.algorithm == .ps256)
        }
    }

    // MARK: - Storage

    @Test("a StoredLogin's DPoP key and thumbprint survive FileKeychain, plain and encrypted; the encrypted file holds no PEM", arguments: [false, true])
    func storedKeyRoundTrip(_ encrypted: Bool) async throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("DPoPTests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: root) }
        let directory = root.appendingPathComponent("store")
        let encryption = encrypted ? try TokenEncryption(current: TokenEncryptionKey(id: "k1", bytes: [UInt8](repeating: 7, count: 32))) : nil
        let store = try FileKeychain(directory: directory, encryption: encryption)

        for (index, algorithm) in [JWSAlgorithm.es256, .ps256, .edDSA].enumerated() {
            let key = try DPoPKey.generate(algorithm)
            var login = StoredLogin(
                tokens: TokenSet(accessToken: Secret("access-\(index)"), tokenType: "DPoP", refreshToken: Secret("refresh-\(index)"),
                    receivedAt: Date(timeIntervalSince1970: 1_800_000_000)),
                issuer: "https://login.example", clientID: "client-1", subject: "subject-1"
            )
            login.dpopKey = key
            let storeKey = TokenStoreKey(service: "dpop", account: "a\(index)")
            try store.save(login, for: storeKey)
            let loaded = try #require(try store.load(storeKey))
            #expect(loaded == login)
            #expect(loaded.dpopKey == key && loaded.dpopKey?.algorithm == algorithm)
            #expect(loaded.dpopThumbprint == key.thumbprint)
            // The loaded key signs proofs whose jwk is the original key's.
            let url = try #require(URL(string: "https://api.example/x"))
            let proof = try #require(loaded.dpopKey).proof(method: "GET", url: url)
            let original = try key.proof(method: "GET", url: url)
            let jwk = try #require(try UnverifiedJWT(proof).header["jwk"])
            #expect(jwk == (try UnverifiedJWT(original).header["jwk"]))
            try ParsedJWS(proof).verifySignature(with: try JWK(members: try #require(jwk.objectValue)))
        }
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasSuffix(".json") }
        #expect(names.count == 3)
        for name in names {
            let text = String(decoding: try Data(contentsOf: directory.appendingPathComponent(name)), as: UTF8.self)
            #expect(text.contains("PRIVATE KEY") == !encrypted, "\(name)")
        }
    }
}
