import ArgumentParser
import Foundation
import OIDC

/// `oidc authorize-url`: print an authorization URL, deterministic with `--state`, `--nonce` and
/// `--code-verifier`.
struct AuthorizeURL: ParsableCommand, LoggingCommand {
    static let configuration = CommandConfiguration(
        commandName: "authorize-url",
        abstract: "Print an authorization URL (PKCE S256, state, nonce) for a provider.",
        discussion: """
            With --state, --nonce and --code-verifier the output is deterministic; otherwise each is \
            random (256, 256 and 384 bits). --output json also prints the state, nonce, verifier and \
            challenge, which the code exchange needs: keep them private.
            """
    )

    @OptionGroup var logging: LoggingOptions

    enum Provider: String, ExpressibleByArgument, CaseIterable {
        case generic, schibsted, swan
    }

    enum Output: String, ExpressibleByArgument, CaseIterable {
        case url, json
    }

    @Option(help: "The provider preset.")
    var provider: Provider = .generic

    @Option(
        help: "Schibsted environment: pre, sweden (com), norway (no), finland (fi), denmark (dk), or an https base URL.",
        transform: { name in
            guard let environment = Schibsted.Environment(name: name) else {
                throw ValidationError("unknown Schibsted environment '\(name)'")
            }
            return environment
        }
    )
    var environment: Schibsted.Environment?

    @Option(help: "The issuer (generic provider); checked against the callback's iss.")
    var issuer: String?

    @Option(help: "The authorization endpoint (generic provider).")
    var authorizationEndpoint: String?

    @Option(help: "The client id.")
    var clientId: String

    @Option(help: "The redirect URI (default: the RFC 8252 loopback http://127.0.0.1/callback).")
    var redirectUri: String?

    @Option(help: "A scope value; repeat for several (default: the provider's).")
    var scope: [String] = []

    @Option(help: "The state to send (default: random).")
    var state: String?

    @Option(help: "The nonce to send (default: random).")
    var nonce: String?

    @Option(help: "The PKCE code verifier, 43-128 characters of A-Z a-z 0-9 - . _ ~ (default: random).")
    var codeVerifier: String?

    @Option(
        help: "Schibsted multi-factor method: \(Schibsted.MFAMethod.allCases.map(\.rawValue).joined(separator: ", ")).",
        transform: { value in
            guard let method = Schibsted.MFAMethod(rawValue: value) else {
                throw ValidationError("unknown MFA method '\(value)'")
            }
            return method
        }
    )
    var mfa: Schibsted.MFAMethod?

    @Option(help: "The login_hint.")
    var loginHint: String?

    @Option(help: "The prompt (Schibsted default: select_account).")
    var prompt: String?

    @Option(help: "The acr_values (generic and Swan; Schibsted uses --mfa).")
    var acrValues: String?

    @Option(help: "The max_age in seconds.")
    var maxAge: Int?

    @Option(help: "The ui_locales: preferred languages as space-separated BCP 47 tags.")
    var uiLocales: String?

    @Option(name: .customLong("param"), help: "An extra parameter as name=value; repeat for several.")
    var parameters: [String] = []

    @Option(help: "What to print: url, or json with the state, nonce, verifier and challenge.")
    var output: Output = .url

    static let defaultRedirectURI = "http://127.0.0.1/callback"

    func validate() throws {
        if provider != .schibsted {
            if environment != nil { throw ValidationError("--environment is for --provider schibsted only") }
            if mfa != nil { throw ValidationError("--mfa is for --provider schibsted only; use --acr-values") }
        }
        switch provider {
        case .generic:
            if authorizationEndpoint == nil {
                throw ValidationError("--authorization-endpoint is required with --provider generic")
            }
        case .schibsted:
            if environment == nil { throw ValidationError("--environment is required with --provider schibsted") }
            if acrValues != nil { throw ValidationError("--acr-values is not for Schibsted; use --mfa") }
            if mfa != nil, prompt != nil {
                throw ValidationError("--mfa and --prompt exclude each other: Schibsted sends acr_values or prompt, never both")
            }
            fallthrough
        case .swan:
            if issuer != nil { throw ValidationError("--issuer is for --provider generic only") }
            if authorizationEndpoint != nil {
                throw ValidationError("--authorization-endpoint is for --provider generic only")
            }
        }
        for parameter in try extraParameters() where AuthorizationRequest.reservedParameterNames.contains(parameter.name) {
            throw ValidationError("--param cannot set '\(parameter.name)'; use its own option")
        }
        guard !clientId.isEmpty else { throw ValidationError("--client-id must not be empty") }
        if !scope.isEmpty { try Self.check("--scope", "") { _ in _ = try AuthorizationRequest.scopeValue(scope) } }
        try Self.check("--authorization-endpoint", authorizationEndpoint) { text in
            guard let url = URL(string: text), url.scheme != nil else { throw OIDCError(.invalidArgument, "'\(text)' is not an absolute URL.") }
            try EndpointPolicy.validate(url, role: "authorization endpoint")
        }
        if provider == .schibsted, let environment, let mfa {
            try Self.check("--mfa", mfa.rawValue) { _ in
                _ = try AuthorizationRequest.schibsted(environment: environment, clientID: "c", redirectURI: "com.example:/login", mfa: mfa)
            }
        }
        var names = Set<String>()
        for parameter in try extraParameters() where !names.insert(parameter.name).inserted {
            throw ValidationError("--param: '\(parameter.name)' is given twice")
        }
        try Self.check("--code-verifier", codeVerifier) { _ = try PKCE(verifier: $0) }
        try Self.check("--redirect-uri", redirectUri) { _ = try RedirectMatcher(redirectURI: $0) }
        if let state, state.isEmpty { throw ValidationError("--state must not be empty") }
        if let nonce, nonce.isEmpty { throw ValidationError("--nonce must not be empty") }
        if let maxAge, maxAge < 0 { throw ValidationError("--max-age must be zero or more seconds") }
    }

    /// Runs a library check on a flag's value and names the flag in the usage error.
    private static func check(_ flag: String, _ value: String?, _ body: (String) throws -> Void) throws {
        guard let value else { return }
        do { try body(value) } catch let error as OIDCError { throw ValidationError("\(flag): \(error.message)") }
    }

    func extraParameters() throws -> [OAuthParameter] { try Self.parseParameters(parameters) }

    /// `--param name=value` values as parameters.
    static func parseParameters(_ parameters: [String]) throws -> [OAuthParameter] {
        try parameters.map { pair in
            guard let equals = pair.firstIndex(of: "="), equals != pair.startIndex else {
                throw ValidationError("--param needs name=value, got '\(pair)'")
            }
            return OAuthParameter(String(pair[..<equals]), String(pair[pair.index(after: equals)...]))
        }
    }

    func run() throws {
        let redirect = redirectUri ?? {
            Console.error("oidc: no --redirect-uri given; using \(Self.defaultRedirectURI) (RFC 8252 loopback, any port)")
            return Self.defaultRedirectURI
        }()
        let request: AuthorizationRequest
        let url: URL
        do {
            request = try makeRequest(redirectURI: redirect)
            url = try request.url()
        } catch let error as OIDCError where error.category == .configuration || error.code == .duplicateParameter {
            // What is left to clash is the endpoint's own query against a parameter of ours.
            throw ValidationError("--authorization-endpoint or --param: \(error.message)")
        }
        switch output {
        case .url:
            Console.output(url.absoluteString)
        case .json:
            var object: [String: Any] = [
                "url": url.absoluteString,
                "client_id": request.clientID,
                "redirect_uri": request.redirectURI,
                "state": request.state,
            ]
            object["nonce"] = request.nonce
            object["issuer"] = request.issuer
            if let pkce = request.pkce {
                object["code_verifier"] = pkce.verifier.revealedValue  // the user asked for it on stdout
                object["code_challenge"] = pkce.challenge
                object["code_challenge_method"] = pkce.method
            }
            let data = try JSONSerialization.data(
                withJSONObject: object, options: [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
            )
            Console.output(String(decoding: data, as: UTF8.self))
        }
    }

    func makeRequest(redirectURI: String) throws -> AuthorizationRequest {
        var request: AuthorizationRequest
        switch provider {
        case .schibsted:
            // validate() guarantees the environment.
            request = try AuthorizationRequest.schibsted(
                environment: environment ?? .pre, clientID: clientId, redirectURI: redirectURI,
                extraScopes: scope, mfa: mfa, prompt: prompt, loginHint: loginHint,
                state: state, nonce: nonce, codeVerifier: codeVerifier
            )
        case .swan, .generic:
            if provider == .swan {
                request = try AuthorizationRequest(
                    provider: .swan, clientID: clientId, redirectURI: redirectURI, scopes: scope.isEmpty ? nil : scope
                )
            } else {
                guard let endpoint = authorizationEndpoint.flatMap(URL.init(string:)), endpoint.scheme != nil else {
                    throw ValidationError("--authorization-endpoint must be an absolute URL")
                }
                request = try AuthorizationRequest(
                    authorizationEndpoint: endpoint, clientID: clientId, redirectURI: redirectURI,
                    scopes: scope.isEmpty ? ["openid"] : scope, issuer: issuer
                )
            }
            if let state { request.state = state }
            if let nonce { request.nonce = nonce }
            if let codeVerifier { request.pkce = try PKCE(verifier: codeVerifier) }
            request.loginHint = loginHint
            request.prompt = prompt
            request.acrValues = acrValues
        }
        request.maxAge = maxAge
        request.uiLocales = uiLocales
        request.additionalParameters += try extraParameters()
        return request
    }
}

