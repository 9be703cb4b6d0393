import Foundation
import OIDC
import OIDCTesting
import OIDCTestSupport
import Testing

/// Signed authorization responses (JARM, `response_mode=jwt`) in a server's code flow
/// (`RelyingParty.completeLogin(callback:for:)`), over real loopback HTTP against TestProvider.
@Suite("JARM: signed authorization responses", .timeLimit(.scaledMinutes(1)))
struct JARMTests {
    static let redirectURI = "http://127.0.0.1:9/callback"

    static func configuration(_ fault: TestProvider.SignedResponseFault? = nil) -> TestProvider.Configuration {
        var configuration = TestProvider.Configuration()
        configuration.signedResponseFault = fault
        return configuration
    }

    /// A relying party of `provider` that asks for `mode`.
    static func relyingParty(_ provider: TestProvider, _ mode: AuthorizationResponseMode = .jwt) async throws -> RelyingParty {
        var rp = try await provider.relyingParty()
        rp.responseMode = mode
        return rp
    }

    /// The names of `url`'s query parameters.
    static func names(_ url: URL) -> [String] {
        URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems?.map(\.name) ?? []
    }

    @Test("discovery: the response modes and the JARM algorithms are read", arguments: [TestProvider.IDTokenAlgorithm.rs256, .es256])
    func discovery(_ algorithm: TestProvider.IDTokenAlgorithm) async throws {
        try await withTestProvider(TestProvider.Configuration(idTokenAlgorithm: algorithm)) { provider in
            let rp = try await provider.relyingParty()
            #expect(rp.provider.responseModesSupported == ["query", "jwt", "query.jwt"])
            #expect(rp.provider.authorizationSigningAlgorithms == [algorithm.rawValue])
            #expect(JARMVerifier(provider: rp.provider, clientID: rp.clientID).allowedAlgorithms == [JWSAlgorithm(rawValue: algorithm.rawValue)!])
        }
    }

    @Test("a full login: the URL asks for the mode, the callback carries only response, and the login completes", arguments: [AuthorizationResponseMode.jwt, .queryJWT])
    func login(_ mode: AuthorizationResponseMode) async throws {
        try await withTestProvider { provider in
            let rp = try await Self.relyingParty(provider, mode)
            let request = try rp.authorizationRequest(redirectURI: Self.redirectURI)
            #expect(request.responseMode == mode)
            let url = try await rp.authorizationURL(for: request)
            #expect(Self.names(url).prefix(4) == ["client_id", "redirect_uri", "response_type", "response_mode"])
            #expect(try PushedAuthorizationTests.query(url)["response_mode"] == mode.rawValue)
            let callback = try await RelyingPartyTests.callback(for: url, rp.transport)
            #expect(Self.names(callback) == ["response"])
            let login = try await rp.completeLogin(callback: callback, for: request)
            #expect(login.idToken.claims.nonce == request.nonce)
            #expect(await provider.grantCount("authorization_code") == 1)
        }
    }

    @Test("through PAR: the push carries response_mode, the browser's URL only client_id and request_uri, and the signed callback completes the login")
    func pushed() async throws {
        try await withTestProvider { provider in
            var rp = try await Self.relyingParty(provider)
            rp.pushedAuthorization = .always
            let request = try rp.authorizationRequest(redirectURI: Self.redirectURI)
            let url = try await rp.authorizationURL(for: request)
            #expect(Set(Self.names(url)) == ["client_id", "request_uri"])
            #expect(await provider.requestParameters(.pushedAuthorization).first?["response_mode"] == "jwt")
            let callback = try await RelyingPartyTests.callback(for: url, rp.transport)
            #expect(Self.names(callback) == ["response"])
            _ = try await rp.completeLogin(callback: callback, for: request)
            #expect(await provider.grantCount("authorization_code") == 1)
        }
    }

    @Test("a provider error inside the signed response is reported as the provider's error; nothing is exchanged")
    func providerError() async throws {
        var configuration = Self.configuration()
        configuration.authorizeBehaviour = .error("access_denied", description: "The user said no.")
        try await withTestProvider(configuration) { provider in
            let rp = try await Self.relyingParty(provider)
            let request = try rp.authorizationRequest(redirectURI: Self.redirectURI)
            let callback = try await RelyingPartyTests.callback(for: try await rp.authorizationURL(for: request), rp.transport)
            #expect(Self.names(callback) == ["response"])
            let error = await #expect(throws: OIDCError.self) { try await rp.completeLogin(callback: callback, for: request) }
            #expect(error?.code == .providerError)
            #expect(error?.providerError?.error == "access_denied")
            #expect(error?.providerError?.errorDescription == "The user said no.")
            #expect(await provider.grantCount("authorization_code") == 0)
        }
    }

    /// Each broken response, and the code it is refused with.
    static let refusals: [(TestProvider.SignedResponseFault, OIDCError.Code)] = [
        (.wrongIssuer, .issuerMismatch), (.wrongAudience, .audienceMismatch), (.expired, .tokenExpired),
        (.badSignature, .invalidSignature), (.unknownKey, .keyNotFound), (.encrypted, .algorithmNotAllowed),
        (.plainCode, .unsecuredResponse), (.noResponse, .missingParameter),
    ]

    @Test("each broken signed response is refused with its own error, before any code is exchanged; no message holds the code or the response", arguments: refusals)
    func refused(_ fault: TestProvider.SignedResponseFault, _ code: OIDCError.Code) async throws {
        try await withTestProvider(Self.configuration(fault)) { provider in
            let rp = try await Self.relyingParty(provider)
            let request = try rp.authorizationRequest(redirectURI: Self.redirectURI)
            let callback = try await RelyingPartyTests.callback(for: try await rp.authorizationURL(for: request), rp.transport)
            let error = await #expect(throws: OIDCError.self) { try await rp.completeLogin(callback: callback, for: request) }
            #expect(error?.code == code, "\(String(describing: error))")
            #expect(error?.category == (code == .missingParameter ? .provider : .security))
            #expect(await provider.grantCount("authorization_code") == 0)
            let values = URLComponents(url: callback, resolvingAgainstBaseURL: false)?.queryItems?.compactMap(\.value) ?? []
            let text = "\(String(describing: error)) \(error?.context ?? [:])"
            for value in values where value.count > 8 && value != request.state && value != provider.issuer {
                #expect(!text.contains(value))
            }
            if fault == .unknownKey { #expect(await rp.keys?.fetchesRun == 1, "the unknown kid is within the cool-down of the first fetch") }
        }
    }

    @Test("the provider rotated its keys: the unknown kid refetches the JWKS once and the login completes")
    func keyRotation() async throws {
        try await withTestProvider { provider in
            let discovered = try await Self.relyingParty(provider)
            let keys = JWKSCache(transport: discovered.transport, jwksURI: try #require(discovered.provider.jwksURI), unknownKeyCooldown: 0)
            var rp = RelyingParty(tokenClient: discovered.tokenClient, keys: keys)
            rp.responseMode = .jwt
            _ = try await keys.keys()
            try await provider.rotateKeys()
            let request = try rp.authorizationRequest(redirectURI: Self.redirectURI)
            let callback = try await RelyingPartyTests.callback(for: try await rp.authorizationURL(for: request), rp.transport)
            _ = try await rp.completeLogin(callback: callback, for: request)
            #expect(await keys.fetchesRun == 2)
        }
    }

    @Test("the algorithm allow-list: an ES256 response is refused by a verifier that takes RS256 only")
    func algorithmAllowList() async throws {
        try await withTestProvider(TestProvider.Configuration(idTokenAlgorithm: .es256)) { provider in
            let rp = try await Self.relyingParty(provider)
            let request = try rp.authorizationRequest(redirectURI: Self.redirectURI)
            let callback = try await RelyingPartyTests.callback(for: try await rp.authorizationURL(for: request), rp.transport)
            let keys = try #require(rp.keys)
            let strict = JARMVerifier(issuer: provider.issuer, clientID: rp.clientID)
            #expect(strict.allowedAlgorithms == [.rs256])
            let error = await #expect(throws: OIDCError.self) {
                try await AuthorizationResponse(callbackURL: callback, request: request, verifier: strict, keys: keys)
            }
            #expect(error?.code == .algorithmNotAllowed)
            let response = try await AuthorizationResponse(
                callbackURL: callback, request: request, verifier: JARMVerifier(provider: rp.provider, clientID: rp.clientID), keys: keys)
            #expect(response.state == request.state && response.issuer == provider.issuer)
        }
    }

    @Test("a provider that does not list the mode is refused before anything is sent")
    func notOffered() async throws {
        var configuration = Self.configuration()
        configuration.signedResponses = .notOffered
        try await withTestProvider(configuration) { provider in
            var rp = try await Self.relyingParty(provider)
            #expect(rp.provider.responseModesSupported == ["query"])
            let request = try rp.authorizationRequest(redirectURI: Self.redirectURI)
            let error = await #expect(throws: OIDCError.self) { try await rp.authorizationURL(for: request) }
            #expect(error?.code == .invalidArgument)
            #expect(error?.context["response_mode"] == "jwt")
            rp.pushedAuthorization = .always
            _ = await #expect(throws: OIDCError.self) { try await rp.authorizationURL(for: rp.authorizationRequest(redirectURI: Self.redirectURI)) }
            #expect(await provider.requestCount(.pushedAuthorization) == 0)
            #expect(await provider.requestCount(.authorize) == 0)
        }
    }

    @Test("a JARM callback is never read without verification, and a plain request's reader is not given a JARM one")
    func readers() async throws {
        try await withTestProvider { provider in
            let rp = try await Self.relyingParty(provider)
            let request = try rp.authorizationRequest(redirectURI: Self.redirectURI)
            let callback = try await RelyingPartyTests.callback(for: try await rp.authorizationURL(for: request), rp.transport)
            let unverified = #expect(throws: OIDCError.self) { try request.handleRedirect(callback) }
            #expect(unverified?.code == .invalidArgument)
            var plain = request
            plain.responseMode = nil
            let keys = try #require(rp.keys)
            let wrongReader = await #expect(throws: OIDCError.self) {
                try await AuthorizationResponse(callbackURL: callback, request: plain, verifier: JARMVerifier(provider: rp.provider, clientID: rp.clientID), keys: keys)
            }
            #expect(wrongReader?.code == .invalidArgument)
            // response_mode is the library's: an additional parameter of that name is refused.
            var reserved = request
            reserved.additionalParameters = [OAuthParameter("response_mode", "form_post")]
            #expect(throws: OIDCError.self) { try reserved.url() }
        }
    }

    @Test("a plain code beside the signed response is refused too")
    func mixed() async throws {
        try await withTestProvider { provider in
            let rp = try await Self.relyingParty(provider)
            let request = try rp.authorizationRequest(redirectURI: Self.redirectURI)
            let callback = try await RelyingPartyTests.callback(for: try await rp.authorizationURL(for: request), rp.transport)
            let mixed = try #require(URL(string: callback.absoluteString + "&code=attacker-code"))
            let error = await #expect(throws: OIDCError.self) { try await rp.completeLogin(callback: mixed, for: request) }
            #expect(error?.code == .unsecuredResponse)
            #expect(error?.message.contains("attacker-code") == false)
            #expect(await provider.grantCount("authorization_code") == 0)
        }
    }

    @Test("a server's pending login ends with the signed callback carrying its state (read from the response), not with another login's, and completes")
    func pendingAuthorizations() async throws {
        try await withTestProvider { provider in
            let rp = try await Self.relyingParty(provider)
            let pending = PendingAuthorizations()
            let request = try rp.authorizationRequest(redirectURI: Self.redirectURI)
            let id = try await pending.begin(request)
            let other = try rp.authorizationRequest(redirectURI: Self.redirectURI)
            let otherCallback = try await RelyingPartyTests.callback(for: try await rp.authorizationURL(for: other), rp.transport)
            #expect(await pending.end(id, callback: otherCallback) == nil)
            let callback = try await RelyingPartyTests.callback(for: try await rp.authorizationURL(for: request), rp.transport)
            let ended = try #require(await pending.end(id, callback: callback))
            _ = try await rp.completeLogin(callback: callback, for: ended)
            #expect(await provider.grantCount("authorization_code") == 1)
        }
    }

    @Test("FAPI 2.0 Message Signing's combination: a signed request object carrying response_mode=jwt, pushed, with private_key_jwt; the signed response completes the login", arguments: [false, true])
    func withRequestObject(_ pushed: Bool) async throws {
        let (configuration, client, key) = try RequestObjectTests.setUp(pushed: pushed ? .required : .offered, objects: .required)
        try await withTestProvider(configuration) { provider in
            var rp = try await provider.relyingParty(client: client, authentication: .privateKeyJWT(key))
            rp.requestObjectKey = key
            rp.responseMode = .jwt
            let request = try rp.authorizationRequest(redirectURI: RequestObjectTests.redirectURI)
            let url = try await rp.authorizationURL(for: request)
            #expect(Set(Self.names(url)) == (pushed ? ["client_id", "request_uri"] : ["client_id", "request"]))
            let object = try #require(pushed ? await provider.requestParameters(.pushedAuthorization).first?["request"] : PushedAuthorizationTests.query(url)["request"])
            #expect(try UnverifiedJWT(object).claims["response_mode"] == .string("jwt"))
            let callback = try await RelyingPartyTests.callback(for: url, rp.transport)
            #expect(Self.names(callback) == ["response"])
            let login = try await rp.completeLogin(callback: callback, for: request)
            #expect(login.clientID == "fapi-client")
        }
    }
}
