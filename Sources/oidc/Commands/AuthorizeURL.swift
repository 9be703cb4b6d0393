import ArgumentParser
import Foundation
import OIDC

/// `oidc authorize-url`: print an authorization URL, deterministic with `--state`, `--nonce` and
/// `--code-verifier`.
struct AuthorizeURL: AsyncParsableCommand, LoggingCommand {
    static let configuration = CommandConfiguration(
        commandName: "authorize-url",
        abstract: "Print an authorization URL (PKCE S256, state, nonce) for a provider.",
        discussion: """
            With --state, --nonce and --code-verifier the output is deterministic; otherwise each is \
            random (256, 256 and 384 bits). --output json also prints the state, nonce, verifier and \
            challenge, which the code exchange needs: keep them private. With --issuer and no \
            --authorization-endpoint, the endpoint is the one the issuer's discovery document names, \
            as for oidc login.
            """
    )

    @OptionGroup var logging: LoggingOptions

    @OptionGroup var authorization: AuthorizationOptions

    enum Output: String, ExpressibleByArgument, CaseIterable {
        case url, json
    }

    @Option(help: "The authorization endpoint (generic provider); default: the one --issuer's discovery document names.")
    var authorizationEndpoint: String?

    @Option(help: "The redirect URI (default: the RFC 8252 loopback http://127.0.0.1/callback).")
    var redirectUri: String?

    @Option(help: "The state to send (default: random).")
    var state: String?

    @Option(help: "The nonce to send (default: random).")
    var nonce: String?

    @Option(help: "The PKCE code verifier, 43-128 characters of A-Z a-z 0-9 - . _ ~ (default: random).")
    var codeVerifier: String?

    @Option(help: "What to print: url, or json with the state, nonce, verifier and challenge.")
    var output: Output = .url

    static let defaultRedirectURI = "http://127.0.0.1/callback"

    /// The provider this command builds for: generic unless told otherwise.
    private var provider: AuthorizationOptions.Provider { authorization.provider ?? .generic }

    func validate() throws {
        guard authorization.clientId != nil else { throw ValidationError("--client-id is required") }
        let profile = try authorization.profile()
        try AuthorizationOptions.validate(profile)
        switch provider {
        case .generic:
            if authorizationEndpoint == nil, authorization.issuer == nil {
                throw ValidationError("--issuer or --authorization-endpoint is required with --provider generic")
            }
        case .schibsted, .swan:
            if authorizationEndpoint != nil {
                throw ValidationError("--authorization-endpoint is for --provider generic only")
            }
        }
        try Self.check("--authorization-endpoint", authorizationEndpoint) { text in
            guard let url = URL(string: text), url.scheme != nil else { throw OIDCError(.invalidArgument, "'\(text)' is not an absolute URL.") }
            try EndpointURLPolicy.validate(url, role: "authorization endpoint")
        }
        try Self.check("--code-verifier", codeVerifier) { _ = try PKCE(verifier: $0) }
        try Self.check("--redirect-uri", redirectUri) { _ = try RedirectMatcher(redirectURI: $0) }
        if let state, state.isEmpty { throw ValidationError("--state must not be empty") }
        if let nonce, nonce.isEmpty { throw ValidationError("--nonce must not be empty") }
    }

    /// Runs a library check on a flag's value and names the flag in the usage error.
    private static func check(_ flag: String, _ value: String?, _ body: (String) throws -> Void) throws {
        guard let value else { return }
        do { try body(value) } catch let error as OIDCError { throw ValidationError("\(flag): \(error.message)") }
    }

    func run() async throws {
        let redirect = redirectUri ?? {
            Console.error("oidc: no --redirect-uri given; using \(Self.defaultRedirectURI) (RFC 8252 loopback, any port)")
            return Self.defaultRedirectURI
        }()
        let discovered = try await discoveredEndpoint()
        let request: AuthorizationRequest
        let url: URL
        do {
            request = try makeRequest(redirectURI: redirect, discovered: discovered)
            url = try request.url()
        } catch let error as OIDCError where error.category == .configuration || error.code == .duplicateParameter {
            // What is left to clash is the endpoint's own query against a parameter of ours.
            throw ValidationError("--authorization-endpoint or --param: \(error.message)")
        } catch let error as ValidationError {
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

    /// The authorization endpoint `--issuer`'s discovery document names (OpenID Connect Discovery,
    /// RFC 8414), as `oidc login` finds it; `nil` when `--authorization-endpoint` or a preset gives it.
    private func discoveredEndpoint() async throws -> URL? {
        guard provider == .generic, authorizationEndpoint == nil, let issuer = authorization.issuer else { return nil }
        let metadata = try await withNIOHTTPTransport(logger: CLILog.logger(.transport)) { transport in
            try await ProviderDiscovery(
                transport: transport, requestOptions: HTTPRequestOptions(timeout: .seconds(try NetworkTimeout.environment() ?? NetworkTimeout.loginDefault)), logger: CLILog.logger(.discovery)
            ).metadata(for: issuer)
        }
        guard let endpoint = metadata.authorizationEndpoint else {
            throw OIDCError(
                .invalidArgument, "The discovery document of \(issuer) names no authorization_endpoint: give --authorization-endpoint."
            )
        }
        return endpoint
    }

    /// The request: the preset's (Schibsted, Swan) or one to `--authorization-endpoint` with the
    /// scopes given (`openid` when none), the shared options laid over it, then the deterministic
    /// values.
    func makeRequest(redirectURI: String, discovered: URL? = nil) throws -> AuthorizationRequest {
        let profile = try authorization.profile()
        let clientID = authorization.clientId ?? ""
        let scopes = try authorization.scopes()
        var request: AuthorizationRequest
        switch provider {
        case .schibsted:
            // validate() guarantees the environment; configure(_:) makes the preset's request.
            request = try AuthorizationRequest(provider: .schibsted(.pre), clientID: clientID, redirectURI: redirectURI)
        case .swan:
            request = try AuthorizationRequest(provider: .swan, clientID: clientID, redirectURI: redirectURI, scopes: scopes.isEmpty ? nil : scopes)
        case .generic:
            guard let endpoint = authorizationEndpoint.flatMap(URL.init(string:)) ?? discovered, endpoint.scheme != nil else {
                throw ValidationError("--authorization-endpoint must be an absolute URL")
            }
            request = try AuthorizationRequest(
                authorizationEndpoint: endpoint, clientID: clientID, redirectURI: redirectURI,
                scopes: scopes.isEmpty ? ["openid"] : scopes, issuer: authorization.issuer
            )
        }
        try profile.configure(&request)
        if let state { request.state = state }
        if let nonce { request.nonce = nonce }
        if let codeVerifier { request.pkce = try PKCE(verifier: codeVerifier) }
        return request
    }
}
