public import Foundation

/// The Schibsted account preset, reproducing the Schibsted account iOS SDK (5.x and 6.x).
///
/// The SDK does not use discovery: everything is derived from the environment's base URL, which is
/// also the issuer. See `docs/schibsted.md`.
public enum Schibsted {
    /// Keychain service under which the SDK stores sessions; the account is the client id.
    public static let storageService = "com.schibsted.account"

    /// A Schibsted account environment.
    public enum Environment: Sendable, Hashable, CustomStringConvertible {
        /// The pre-production environment, `https://identity-pre.schibsted.com`: the one to test with, and
        /// the only one that offers the country-specific `eid-*` MFA methods.
        case pre
        /// `proCom` in 5.x.
        case sweden
        /// `proNo` in 5.x.
        case norway
        /// `proFi` in 5.x.
        case finland
        /// `proDk` in 5.x (dropped in 6.x).
        case denmark
        /// Any other deployment, by its base URL (no trailing slash).
        case custom(URL)

        /// The named environments.
        public static let all: [Environment] = [.pre, .sweden, .norway, .finland, .denmark]

        /// Accepts the SDKs' spellings: `pre`; `com`, `procom`, `sweden`, `se`; `no`, `prono`, `norway`;
        /// `fi`, `profi`, `finland`; `dk`, `prodk`, `denmark`; or an https base URL.
        public init?(name: String) {
            switch name.lowercased() {
            case "pre": self = .pre
            case "com", "procom", "sweden", "se": self = .sweden
            case "no", "prono", "norway": self = .norway
            case "fi", "profi", "finland": self = .finland
            case "dk", "prodk", "denmark": self = .denmark
            default:
                // A plain https origin (and path): no user info, query, fragment or escaped host.
                guard name.lowercased().hasPrefix("https://"), let url = URL(string: name),
                    let components = URLComponents(url: url, resolvingAgainstBaseURL: false),
                    let host = components.percentEncodedHost, !host.isEmpty, !host.contains("%"),
                    components.user == nil, components.password == nil, components.query == nil, components.fragment == nil
                else {
                    return nil
                }
                self = .custom(url)
            }
        }

        /// The base URL, which is also the issuer.
        public var baseURL: URL {
            switch self {
            case .pre: URL(string: "https://identity-pre.schibsted.com")!
            case .sweden: URL(string: "https://login.schibsted.com")!
            case .norway: URL(string: "https://payment.schibsted.no")!
            case .finland: URL(string: "https://login.schibsted.fi")!
            case .denmark: URL(string: "https://login.schibsted.dk")!
            case .custom(let url):
                url.absoluteString.hasSuffix("/") ? URL(string: String(url.absoluteString.dropLast())) ?? url : url
            }
        }

        /// The session service (`https://session-service.<host>`).
        public var sessionServiceURL: URL {
            var components = URLComponents()
            components.scheme = "https"
            components.host = "session-service." + (baseURL.host ?? "")
            return components.url ?? baseURL
        }

        /// The environment's name (`pre`, `sweden`, `norway`, `finland`, `denmark`), or a custom
        /// environment's base URL.
        public var description: String {
            switch self {
            case .pre: "pre"
            case .sweden: "sweden"
            case .norway: "norway"
            case .finland: "finland"
            case .denmark: "denmark"
            case .custom(let url): url.absoluteString
            }
        }

        /// Whether the `eid-se`, `eid-no`, `eid-fi`, `eid-dk` methods may be requested: on `pre` only,
        /// as the Schibsted SDK documents.
        var allowsCountrySpecificEID: Bool { self == .pre }
    }

    /// A multi-factor authentication method, requested through `acr_values`.
    public enum MFAMethod: String, Sendable, Hashable, CaseIterable {
        /// The user enters the password again (`password`).
        case password
        /// A one-time code (`otp`).
        case otp
        /// A one-time code sent by SMS (`sms`).
        case sms
        /// An electronic ID, such as BankID (`eid`).
        case eid
        /// A Swedish electronic ID (`eid-se`); `pre` only. The ID token's `amr` shows `eid`.
        case eidSE = "eid-se"
        /// A Norwegian electronic ID (`eid-no`); `pre` only. The ID token's `amr` shows `eid`.
        case eidNO = "eid-no"
        /// A Finnish electronic ID (`eid-fi`); `pre` only. The ID token's `amr` shows `eid`.
        case eidFI = "eid-fi"
        /// A Danish electronic ID (`eid-dk`); `pre` only. The ID token's `amr` shows `eid`.
        case eidDK = "eid-dk"

        /// The value the ID token's `amr` must contain: `eid` for every `eid-*` method.
        public var amrValue: String { rawValue.hasPrefix("eid") ? "eid" : rawValue }
    }

    /// The user-profile endpoint, `GET {base}/api/2/user/<sub>`.
    public static func userProfileURL(environment: Environment, subject: String) -> URL {
        environment.baseURL.appendingPathComponent("api/2/user").appendingPathComponent(subject)
    }
}

extension ProviderConfiguration {
    /// Schibsted account: `{base}/oauth/authorize`, `/oauth/token`, `/oauth/jwks`; public client;
    /// `X-OIDC: v1` on token requests; issuers compared ignoring one trailing slash.
    public static func schibsted(_ environment: Schibsted.Environment) -> ProviderConfiguration {
        let base = environment.baseURL
        var configuration = ProviderConfiguration(
            issuer: base.absoluteString,
            authorizationEndpoint: base.appendingPathComponent("oauth/authorize"),
            tokenEndpoint: base.appendingPathComponent("oauth/token"),
            jwksURI: base.appendingPathComponent("oauth/jwks"),
            defaultScopes: ["openid", "offline_access"],
            clientAuthentication: .none
        )
        configuration.tokenRequestHeaders = [OAuthParameter("X-OIDC", "v1")]
        configuration.issuerMatching = .ignoringTrailingSlash
        return configuration
    }
}

extension AuthorizationRequest {
    /// A Schibsted account login, exactly as the SDK builds it.
    ///
    /// Parameters, in order: `client_id`, `redirect_uri`, `response_type`, `scope`, `state`, `nonce`,
    /// `code_challenge`, `code_challenge_method`, then `login_hint` (only when non-empty),
    /// `assertion`, `x_domain_id`, and last exactly one of `acr_values` (with `mfa`) or `prompt`
    /// (`select_account` unless `prompt` says otherwise). The scope is `openid offline_access`
    /// followed by `extraScopes` in their order, without duplicates.
    ///
    /// State, nonce and verifier are random (256, 256 and 384 bits) unless given; the SDK's own
    /// 10-character state and nonce and 60-character verifier are accepted too.
    ///
    /// - Throws: ``OIDCError/Code/invalidArgument`` when both `mfa` and `prompt` are given (Schibsted
    ///   takes one or the other), for an `eid-*` method outside `pre` or a custom environment, or
    ///   for a malformed verifier.
    public static func schibsted(
        environment: Schibsted.Environment,
        clientID: String,
        redirectURI: String,
        extraScopes: [String] = [],
        mfa: Schibsted.MFAMethod? = nil,
        prompt: String? = nil,
        loginHint: String? = nil,
        assertion: String? = nil,
        xDomainID: String? = nil,
        state: String? = nil,
        nonce: String? = nil,
        codeVerifier: String? = nil
    ) throws(OIDCError) -> AuthorizationRequest {
        let provider = ProviderConfiguration.schibsted(environment)
        var request = try AuthorizationRequest(
            provider: provider, clientID: clientID, redirectURI: redirectURI,
            scopes: provider.defaultScopes + extraScopes
        )
        if let state { request.state = state }
        if let nonce { request.nonce = nonce }
        if let codeVerifier { request.pkce = try PKCE(verifier: codeVerifier) }
        request.loginHint = loginHint
        if let assertion, !assertion.isEmpty { request.additionalParameters.append(.init("assertion", assertion)) }
        if let xDomainID, !xDomainID.isEmpty { request.additionalParameters.append(.init("x_domain_id", xDomainID)) }
        if let mfa {
            guard prompt == nil else {
                throw .invalidArgument("Schibsted sends either acr_values (MFA) or prompt, never both; drop one of them.")
            }
            guard mfa.amrValue == mfa.rawValue || environment.allowsCountrySpecificEID else {
                throw .invalidArgument(
                    "The MFA method '\(mfa.rawValue)' exists only in the pre environment; use 'eid' in \(environment)."
                )
            }
            request.acrValues = mfa.rawValue
            request.requiredAMRValues = [mfa.amrValue]
        } else {
            // An empty prompt is no prompt: Schibsted always gets exactly one of acr_values and prompt.
            request.prompt = prompt.flatMap { $0.isEmpty ? nil : $0 } ?? "select_account"
        }
        return request
    }
}

extension TokenStoreKey {
    /// The Schibsted SDK's key: one session per client (service ``Schibsted/storageService``).
    public static func schibsted(clientID: String) -> TokenStoreKey {
        TokenStoreKey(service: Schibsted.storageService, account: clientID)
    }
}
