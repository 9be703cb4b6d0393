import Foundation
import OIDC
import Testing

@Suite("Schibsted account preset")
struct SchibstedTests {
    static let environments: [(Schibsted.Environment, String)] = [
        (.pre, "https://identity-pre.schibsted.com"),
        (.sweden, "https://login.schibsted.com"),
        (.norway, "https://payment.schibsted.no"),
        (.finland, "https://login.schibsted.fi"),
        (.denmark, "https://login.schibsted.dk"),
    ]

    func request(
        _ environment: Schibsted.Environment = .pre, extraScopes: [String] = [], mfa: Schibsted.MFAMethod? = nil,
        prompt: String? = nil, loginHint: String? = nil, assertion: String? = nil, xDomainID: String? = nil
    ) throws -> AuthorizationRequest {
        try AuthorizationRequest.schibsted(
            environment: environment, clientID: "602525f2b41fa31789a95aa8", redirectURI: "com.example.app:/login",
            extraScopes: extraScopes, mfa: mfa, prompt: prompt, loginHint: loginHint, assertion: assertion,
            xDomainID: xDomainID, state: "aBcDeFgHiJ", nonce: "kLmNoPqRsT", codeVerifier: rfcVerifier
        )
    }

    @Test("every environment builds the SDK's URL exactly", arguments: environments)
    func environmentURL(environment: Schibsted.Environment, base: String) throws {
        let expected = "\(base)/oauth/authorize?client_id=602525f2b41fa31789a95aa8&redirect_uri=com.example.app%3A%2Flogin&response_type=code&scope=openid%20offline_access&state=aBcDeFgHiJ&nonce=kLmNoPqRsT&code_challenge=\(rfcChallenge)&code_challenge_method=S256&prompt=select_account"
        #expect(try request(environment).url().absoluteString == expected)
        let configuration = ProviderConfiguration.schibsted(environment)
        #expect(configuration.issuer == base)
        #expect(configuration.tokenEndpoint?.absoluteString == "\(base)/oauth/token")
        #expect(configuration.jwksURI?.absoluteString == "\(base)/oauth/jwks")
        #expect(configuration.tokenRequestHeaders == [OAuthParameter("X-OIDC", "v1")])
        #expect(configuration.clientAuthentication == .none)
        #expect(environment.sessionServiceURL.absoluteString == "https://session-service.\(URL(string: base)!.host!)")
    }

    @Test("with MFA: acr_values last and no prompt", arguments: Schibsted.MFAMethod.allCases)
    func withMFA(method: Schibsted.MFAMethod) throws {
        let parameters = try queryParameters(request(.pre, mfa: method).url())
        #expect(parameters.last == OAuthParameter("acr_values", method.rawValue))
        #expect(parameters["prompt"] == nil)
    }

    @Test("never both acr_values and prompt, whatever the options")
    func neverBoth() throws {
        for mfa in [nil] + Schibsted.MFAMethod.allCases.map(Optional.some) {
            for prompt in [nil, "login", "select_account"] {
                guard let built = try? request(.pre, mfa: mfa, prompt: prompt) else {
                    #expect(mfa != nil && prompt != nil, "only MFA together with a prompt may be refused")
                    continue
                }
                let names = try queryParameters(built.url()).map(\.name)
                #expect(names.contains("acr_values") != names.contains("prompt"))
            }
        }
        let error = #expect(throws: OIDCError.self) { try request(mfa: .otp, prompt: "login") }
        #expect(error?.code == .invalidArgument)
    }

    @Test("the caller can ask for another prompt")
    func customPrompt() throws {
        #expect(try queryParameters(request(prompt: "login").url())["prompt"] == "login")
    }

    @Test("extra scopes follow openid offline_access in order, without duplicates")
    func scopes() throws {
        let scope = try queryParameters(request(extraScopes: ["email", "openid", "profile", "email", "offline_access"]).url())["scope"]
        #expect(scope == "openid offline_access email profile")
    }

    @Test("login_hint, assertion and x_domain_id come after the PKCE parameters, in that order; empty ones are omitted")
    func optionalParameters() throws {
        let names = try queryParameters(request(loginHint: "a@b.no", assertion: "jwt", xDomainID: "dom", ).url()).map(\.name)
        #expect(names == [
            "client_id", "redirect_uri", "response_type", "scope", "state", "nonce", "code_challenge",
            "code_challenge_method", "login_hint", "assertion", "x_domain_id", "prompt",
        ])
        let mfaNames = try queryParameters(request(mfa: .sms, loginHint: "a@b.no", xDomainID: "dom").url()).map(\.name)
        #expect(mfaNames.suffix(3) == ["login_hint", "x_domain_id", "acr_values"])
        let emptyNames = try queryParameters(request(loginHint: "", assertion: "", xDomainID: "").url()).map(\.name)
        #expect(!emptyNames.contains("login_hint") && !emptyNames.contains("assertion") && !emptyNames.contains("x_domain_id"))
    }

    @Test("country eID methods exist on pre only", arguments: [Schibsted.MFAMethod.eidSE, .eidNO, .eidFI, .eidDK])
    func countryEID(method: Schibsted.MFAMethod) throws {
        _ = try request(.pre, mfa: method)
        for environment in [Schibsted.Environment.sweden, .norway, .finland, .denmark, .custom(URL(string: "https://login.example.com")!)] {
            let error = #expect(throws: OIDCError.self) { try request(environment, mfa: method) }
            #expect(error?.code == .invalidArgument)
        }
        #expect(method.amrValue == "eid")
    }

    @Test("plain MFA methods are allowed everywhere and expect themselves in amr", arguments: [Schibsted.MFAMethod.password, .otp, .sms, .eid])
    func plainMFA(method: Schibsted.MFAMethod) throws {
        for (environment, _) in Self.environments { _ = try request(environment, mfa: method) }
        #expect(method.amrValue == method.rawValue)
    }

    @Test("both SDK spellings of every environment are accepted", arguments: [
        ("pre", Schibsted.Environment.pre), ("com", .sweden), ("proCom", .sweden), ("sweden", .sweden),
        ("no", .norway), ("proNo", .norway), ("norway", .norway), ("fi", .finland), ("proFi", .finland),
        ("finland", .finland), ("dk", .denmark), ("proDk", .denmark), ("denmark", .denmark),
    ])
    func spellings(name: String, environment: Schibsted.Environment) {
        #expect(Schibsted.Environment(name: name) == environment)
    }

    @Test("a custom https base URL works and unknown names are refused")
    func customEnvironment() throws {
        let custom = try #require(Schibsted.Environment(name: "https://login.example.com/"))
        #expect(custom.baseURL.absoluteString == "https://login.example.com")
        #expect(try request(custom).url().absoluteString.hasPrefix("https://login.example.com/oauth/authorize?client_id="))
        #expect(Schibsted.Environment(name: "prod") == nil)
        #expect(Schibsted.Environment(name: "http://login.example.com") == nil)
        for odd in ["https://user@login.example.com", "https://login.example.com?x=1", "https://login.example.com#f", "https://a%20b.example"] {
            #expect(Schibsted.Environment(name: odd) == nil, "\(odd)")
        }
        #expect(custom.sessionServiceURL.absoluteString == "https://session-service.login.example.com")
    }

    @Test("an empty prompt still sends prompt=select_account: always exactly one of acr_values and prompt")
    func emptyPrompt() throws {
        let url = try AuthorizationRequest.schibsted(environment: .pre, clientID: "c", redirectURI: "com.example:/login", prompt: "").url().absoluteString
        #expect(url.hasSuffix("&prompt=select_account"))
        #expect(!url.contains("acr_values"))
    }

    @Test("the SDK's own short state and nonce and 60-character verifier are accepted")
    func sdkValues() throws {
        let verifier = String(repeating: "Ab3", count: 20)
        let request = try AuthorizationRequest.schibsted(
            environment: .pre, clientID: "c", redirectURI: "com.example:/login", state: "0123456789", nonce: "abcdefghij",
            codeVerifier: verifier
        )
        #expect(request.pkce?.verifier.revealedValue == verifier)
    }

    @Test("the profile URL and storage keys follow the SDK")
    func profileAndStorage() {
        #expect(Schibsted.userProfileURL(environment: .pre, subject: "abc-123").absoluteString == "https://identity-pre.schibsted.com/api/2/user/abc-123")
        #expect(Schibsted.storageService == "com.schibsted.account")
    }
}
