import ArgumentParser
import Dispatch
import Foundation
import OIDC
import OIDCTesting

/// `oidc provider`: the local test provider in the foreground, for demos and other programs' tests.
struct Provider: AsyncParsableCommand, LoggingCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run the local OpenID test provider on loopback until interrupted.",
        discussion: """
            Prints the issuer URL on stdout once it is listening (discovery at \
            ISSUER/.well-known/openid-configuration), then serves until SIGINT (exit 130) or SIGTERM \
            (exit 0). Registered by default: the public client 'test-client' with redirect URI \
            http://127.0.0.1/callback on any port (RFC 8252). Every sign-in is the test user, at once, \
            unless --login-page is given. Beside it, a protected resource at /resource (RFC 9728 \
            metadata, a 401 naming it and the scope read, /resource/admin answering 403 \
            insufficient_scope for admin), for oidc login --resource ISSUER/resource --client-id \
            test-client (or, with --registration, no --client-id: the client registers itself). \
            Without --scope that login asks for the scope the 401 names (read), not every \
            scope the resource lists; /resource/admin then shows a step-up. Access tokens are opaque, \
            unless the login names a resource: oidc login --resource URL, or --param resource=URL, \
            gets JWT access tokens (at+jwt) with that aud, which is what oidc resource-server takes \
            (oidc login --resource http://127.0.0.1:8080 --client-id test-client for one on port \
            8080). Test use only: keys and tokens live in memory.
            """
    )

    @OptionGroup var logging: LoggingOptions

    @Option(help: "The port to listen on (0: any free port).")
    var port: Int = 0

    @Option(help: "The loopback address to bind: 127.0.0.1 or ::1.")
    var host: String = "127.0.0.1"

    @Option(help: "A path after host:port in the issuer, such as /realms/test.")
    var issuerPath: String = ""

    @Option(help: "Access-token lifetime in seconds.")
    var accessTokenLifetime: Int = 3600

    @Option(help: "Register this client id too (public unless --client-secret is given).")
    var clientId: String?

    @Option(help: "The secret of --client-id (client_secret_basic); visible in ps, so prefer --client-secret-file.")
    var clientSecret: String?

    @Option(help: "A file holding the secret of --client-id.")
    var clientSecretFile: String?

    @Option(help: "A redirect URI for --client-id; repeat for several (default http://127.0.0.1/callback).")
    var redirectUri: [String] = []

    @Option(
        help: "The ID-token signature algorithm: RS256 or ES256.",
        transform: { value in
            guard let algorithm = TestProvider.IDTokenAlgorithm(rawValue: value) else { throw ValidationError("must be RS256 or ES256, not '\(value)'") }
            return algorithm
        }
    )
    var idTokenAlg: TestProvider.IDTokenAlgorithm = .rs256

    @Option(help: "The test user's subject (sub).")
    var subject: String = TestUser.default.subject

    @Flag(help: "Keep refresh tokens valid across refreshes instead of rotating them.")
    var noRotation = false

    @Flag(help: "Show a small sign-in page instead of signing in at once (for a real browser).")
    var loginPage = false

    @Option(help: "Pushed authorization requests (RFC 9126) at /par: offered (default), required (/authorize takes nothing else) or off.")
    var par: PushedAuthorizationMode = .offered

    @Flag(help: "Serve dynamic client registration (RFC 7591) at ISSUER/register, and reads of a registration (RFC 7592); a registered client's loopback redirect URI matches with its port, as MCP servers' do.")
    var registration = false

    @Flag(help: "Serve only RFC 8414 metadata: no OpenID discovery, no jwks_uri, no ID tokens (a plain OAuth server, as most MCP authorization servers are).")
    var plainOauth = false

    @Flag(help: "The protected resource at /resource takes only DPoP-bound tokens (its metadata says dpop_bound_access_tokens_required).")
    var resourceRequiresDpop = false

    @OptionGroup(title: "Connections") var connections: ServerLimitOptions

    enum PushedAuthorizationMode: String, ExpressibleByArgument, CaseIterable {
        case offered, required, off
        var configuration: TestProvider.PushedAuthorizationRequests {
            switch self {
            case .offered: .offered
            case .required: .required
            case .off: .notOffered
            }
        }
    }

    func validate() throws {
        guard (0...65_535).contains(port) else { throw ValidationError("--port must be 0 to 65535") }
        guard ["127.0.0.1", "::1"].contains(host) else { throw ValidationError("--host must be 127.0.0.1 or ::1 (loopback only)") }
        guard accessTokenLifetime > 0 else { throw ValidationError("--access-token-lifetime must be at least 1 second") }
        if clientSecret != nil || clientSecretFile != nil, clientId == nil { throw ValidationError("--client-secret needs --client-id") }
        if clientSecret != nil, clientSecretFile != nil { throw ValidationError("--client-secret-file: give the secret one way, not both") }
        if !redirectUri.isEmpty, clientId == nil { throw ValidationError("--redirect-uri needs --client-id") }
        if !issuerPath.isEmpty, !issuerPath.hasPrefix("/") || issuerPath.hasSuffix("/") {
            throw ValidationError("--issuer-path must start with / and not end with one, such as /realms/test")
        }
        guard !subject.isEmpty else { throw ValidationError("--subject must not be empty") }
    }

    func run() async throws {
        var configuration = TestProvider.Configuration(
            host: host, port: port, issuerPath: issuerPath, idTokenAlgorithm: idTokenAlg,
            accessTokenLifetime: accessTokenLifetime, refreshTokenRotation: !noRotation,
            authorizeBehaviour: loginPage ? .loginPage : .signIn
        )
        configuration.user.subject = subject
        configuration.pushedAuthorizationRequests = par.configuration
        if registration {
            var registration = TestProvider.Registration()
            registration.exactLoopbackPort = true
            configuration.registration = registration
        }
        if plainOauth { configuration.metadataDocuments = .oauthOnly }
        configuration.protectedResource.requiresDPoP = resourceRequiresDpop
        configuration.connectionLimits = connections.limits
        // Least privilege for `oidc login --resource`, which asks for the 401's scope before the
        // metadata's scopes_supported (the MCP order): read, with admin a step-up away.
        configuration.protectedResource.challengeScope = "read"
        var secret = clientSecret
        if let clientSecretFile { secret = try ClientSecretFile.read(clientSecretFile).revealedValue }
        if let clientId {
            let redirects = redirectUri.isEmpty ? ["http://127.0.0.1/callback"] : redirectUri
            configuration.clients.append(
                secret.map { .confidential(id: clientId, secret: $0, redirectURIs: redirects) }
                    ?? TestProvider.Client(id: clientId, redirectURIs: redirects)
            )
        }
        // Before the issuer is printed: a SIGTERM right after that line stops the provider cleanly.
        let signals = SignalWaiter([SIGINT, SIGTERM])
        let provider: TestProvider
        do { provider = try await TestProvider.start(configuration) } catch let error as OIDCError {
            throw OIDCError(.invalidArgument, "The test provider could not listen: \(error.message)", context: error.context)
        } catch {
            throw OIDCError(.invalidArgument, "The test provider could not listen on \(host):\(port) (\(error)).")
        }
        Console.output(provider.issuer)
        let registers = registration ? " and any that registers at \(provider.registrationEndpoint)" : ""
        Console.error(
            "oidc: test provider listening at \(provider.issuer); clients: \(configuration.clients.map(\.id).joined(separator: ", "))\(registers); protected resource: \(provider.resourceURL); stop with Ctrl-C")
        let signal = await signals.next()
        try await provider.shutdown()
        Console.error("oidc: test provider stopped")
        if signal == SIGINT { throw ExitCode(ExitCodes.interrupted) }
    }
}
