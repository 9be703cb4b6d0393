import ArgumentParser
import Foundation
import OIDC
import OIDCResourceServer
import OIDCTesting

/// `oidc resource-server`: a protected API on loopback that checks access tokens with
/// OIDCResourceServer, for testing clients and trying a provider's tokens; it says why it refused.
struct ResourceServerCommand: AsyncParsableCommand, LoggingCommand {
    static let configuration = CommandConfiguration(
        commandName: "resource-server",
        abstract: "Run a protected API on loopback that verifies access tokens and says why it refuses one.",
        discussion: """
            Prints its base URL on stdout once it is listening, then serves until SIGTERM (exit 0) or \
            SIGINT (exit 130). GET /.well-known/oauth-protected-resource is the RFC 9728 metadata; every \
            other path is protected: 200 with the verified access as JSON (sub, client_id, scope, \
            token_type, iss, aud, exp, cnf, authorization_details), or 401/403/400 with the RFC 6750 / RFC 9449 challenge (401 \
            insufficient_user_authentication with acr_values and max_age under --require-acr or --max-age, \
            RFC 9470), and \
            one line on stderr saying why (never the token). Usage mistakes exit 2; an issuer or JWKS \
            that cannot be reached at start exits 5.
            """
    )

    @OptionGroup var logging: LoggingOptions

    @Option(help: "The issuer whose tokens are accepted (iss, exact).")
    var issuer: String

    @Option(help: "The audience tokens must carry for this resource (aud must contain it), such as https://api.example.com.")
    var audience: String

    @Option(help: "The port to listen on (0: any free port).")
    var port: Int = 0

    @Option(help: "The loopback address to bind: 127.0.0.1 or ::1.")
    var host: String = "127.0.0.1"

    @Option(help: "DPoP (RFC 9449): off (Bearer only), allowed (Bearer and DPoP), or required (DPoP only).")
    var dpop: DPoPMode = .allowed

    @Option(help: "A scope every request's token must carry; repeat for several.")
    var requireScope: [String] = []

    @Option(help: "An authentication context class (acr) the token's login must have, one of those given; repeat for several (RFC 9470 step-up).")
    var requireAcr: [String] = []

    @Option(help: "The most seconds since the user authenticated (the token's auth_time; RFC 9470 step-up).")
    var maxAge: Int?

    @Option(help: "A rich authorization detail type (RFC 9396) the token's authorization_details must hold; repeat for several (else 403 insufficient_scope).")
    var requireDetailType: [String] = []

    @Flag(help: "Require server-provided DPoP nonces (RFC 9449 §9): a proof without the current one gets use_dpop_nonce.")
    var nonce = false

    @Option(help: "The issuer's keys: a JWKS file, or an https URL (http only on loopback). Default: the jwks_uri of the issuer's discovery document.")
    var jwks: String?

    @Flag(help: "Check tokens at the issuer's introspection endpoint (RFC 7662), as --client-id with --client-secret-file.")
    var introspect = false

    @Option(help: "The client id to authenticate introspection requests with (client_secret_basic).")
    var clientId: String?

    @Option(help: "A private file (chmod 600) holding the secret of --client-id.")
    var clientSecretFile: String?

    @OptionGroup(title: "Connections") var connections: ServerLimitOptions

    enum DPoPMode: String, ExpressibleByArgument, CaseIterable {
        case off, allowed, required
    }

    /// `--require-acr` and `--max-age`, when either is given.
    var authenticationRequirement: AuthenticationRequirement? {
        requireAcr.isEmpty && maxAge == nil ? nil : AuthenticationRequirement(acrValues: requireAcr, maxAge: maxAge)
    }

    /// The scope tokens of `--require-scope`, in order, without repeats.
    var requiredScopes: [String] {
        get throws { try ScopeTokens.parse(requireScope, flag: "--require-scope") }
    }

    func validate() throws {
        guard (0...65_535).contains(port) else { throw ValidationError("--port must be 0 to 65535") }
        guard ["127.0.0.1", "::1"].contains(host) else { throw ValidationError("--host must be 127.0.0.1 or ::1 (loopback only)") }
        do { _ = try ProviderDiscovery.wellKnownURLs(for: issuer) } catch { throw ValidationError("--issuer: \(error.message)") }
        try Self.checkAudience(audience)
        _ = try requiredScopes
        for value in requireAcr where value.isEmpty || value.unicodeScalars.contains(where: { $0 == " " || $0 == "\"" || $0 == "\\" || UntrustedText.isUnsafe($0) }) {
            throw ValidationError("--require-acr '\(UntrustedText.sanitized(value))' must be one acr value: printable, without spaces or quotes")
        }
        for value in requireDetailType where value.isEmpty || value.unicodeScalars.contains(where: { UntrustedText.isUnsafe($0) }) {
            throw ValidationError("--require-detail-type: '\(UntrustedText.sanitized(value, limit: 80))' is not a detail type (printable text, not empty)")
        }
        if let maxAge, !(0...315_360_000).contains(maxAge) { throw ValidationError("--max-age must be 0 to 315360000 seconds (10 years)") }
        if nonce, dpop == .off { throw ValidationError("--nonce needs --dpop allowed or required (nonces are for DPoP proofs)") }
        if introspect {
            guard clientId != nil, clientSecretFile != nil else {
                throw ValidationError("--introspect needs --client-id and --client-secret-file (introspection requests are authenticated)")
            }
        } else if clientId != nil || clientSecretFile != nil {
            throw ValidationError("--client-id and --client-secret-file are for --introspect; add it, or leave them out")
        }
        if let clientId, clientId.isEmpty || clientId.unicodeScalars.contains(where: UntrustedText.isUnsafe) {
            throw ValidationError("--client-id must not be empty or hold control characters")
        }
        if let jwks, jwks.isEmpty { throw ValidationError("--jwks must name a file or a URL") }
    }

    /// An audience is one StringOrURI (RFC 7519 §2): printable, without spaces, at most 2048 bytes.
    static func checkAudience(_ audience: String) throws {
        guard !audience.isEmpty else { throw ValidationError("--audience must not be empty") }
        guard audience.utf8.count <= 2048 else { throw ValidationError("--audience is over 2048 bytes") }
        guard !audience.unicodeScalars.contains(where: { $0 == " " || UntrustedText.isUnsafe($0) }) else {
            throw ValidationError("--audience must not hold spaces or control characters")
        }
        if audience.contains("://") {
            guard let url = URL(string: audience), url.scheme != nil, url.host != nil, url.fragment == nil else {
                throw ValidationError("--audience '\(UntrustedText.sanitized(audience))' is not an absolute URL without a fragment")
            }
        }
    }
}

extension ResourceServerCommand {
    func run() async throws {
        let scopes = try requiredScopes
        // Before anything is printed: a SIGTERM right after the URL line stops the server cleanly.
        let signals = SignalWaiter([SIGINT, SIGTERM])
        let signal = try await withNIOHTTPTransport(logger: CLILog.logger(.transport)) { transport in
            // A signal during the start (a slow discovery, say) cancels it: Ctrl-C never waits for a timeout.
            let startup = Task { try await start(scopes: scopes, transport: transport) }
            let watcher = Task {
                let signal = await signals.next()
                startup.cancel()
                return signal
            }
            let service: LoopbackHTTPService
            do { service = try await startup.value } catch {
                guard startup.isCancelled else {
                    watcher.cancel()
                    throw error
                }
                return await watcher.value
            }
            let signal = await watcher.value
            try await service.shutdown()
            return signal
        }
        Console.error("oidc: resource server stopped")
        if signal == SIGINT { throw ExitCode(ExitCodes.interrupted) }
    }

    /// Reads the issuer's keys (or introspection endpoint), binds, and prints the base URL.
    private func start(scopes: [String], transport: any HTTPTransport) async throws -> LoopbackHTTPService {
        let sources = try await ResourceServerSources.load(self, transport: transport)
        let routes = ResourceServerRoutes(requiredScopes: scopes, authentication: authenticationRequirement, detailTypes: requireDetailType)
        let service: LoopbackHTTPService
        do {
            service = try await LoopbackHTTPService.start(host: host, port: port, maximumBodySize: 64 * 1024, connections: connections.limits) { request in
                await routes.answer(request)
            }
        } catch let error as OIDCError {
            throw OIDCError(.invalidArgument, "The resource server could not listen: \(error.message)", context: error.context)
        }
        let base = "http://\(host.contains(":") ? "[\(host)]" : host):\(service.port)"
        do {
            try routes.serve(sources.configuration(base: base, scopes: scopes, command: self))
            try Task.checkCancellation()
        } catch {
            try? await service.shutdown()
            throw error
        }
        Console.output(base)
        Console.error(
            "oidc: resource server listening at \(base) for audience \(UntrustedText.sanitized(audience)); tokens of \(issuer)\(introspect ? " (introspected)" : ""); "
                + "DPoP \(dpop.rawValue)\(nonce ? " with nonces" : ""); stop with Ctrl-C")
        if audience != base, audience != base + "/" {
            // RFC 9728: the metadata names this server's URL as the resource, so a client that logs
            // in for it (oidc login --resource BASE, RFC 8707) gets tokens for BASE, not the audience.
            Console.error(
                "oidc: note: the audience is not this server's URL, which its RFC 9728 metadata names: tokens got with oidc login --resource \(base) carry aud \(base) and are refused; "
                    + "ask for the audience instead (oidc login … --param resource=\(UntrustedText.sanitized(audience))), or give --audience \(base) with a fixed --port")
        }
        return service
    }
}
