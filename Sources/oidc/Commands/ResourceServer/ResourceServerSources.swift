import ArgumentParser
import Foundation
import OIDC
import OIDCResourceServer

/// Where `oidc resource-server` learns what a good token is: the issuer's keys (`--jwks`, or the
/// `jwks_uri` of its discovery document) and, with `--introspect`, its introspection endpoint with
/// the client that may ask. Read once, at start: an issuer that cannot be reached then exits 5, and
/// a JWKS URL or file that is wrong exits 2, before the URL is printed.
struct ResourceServerSources: Sendable {
    var issuers: [TrustedIssuer]
    var introspection: IntrospectionSettings?

    static func load(_ command: ResourceServerCommand, transport: any HTTPTransport) async throws -> ResourceServerSources {
        var metadata: ProviderMetadata?
        // Discovery only when something is needed from it: the JWKS URL, or the introspection endpoint.
        if command.jwks == nil || command.introspect {
            metadata = try await ProviderDiscovery(transport: transport, logger: CLILog.logger(.discovery)).metadata(for: command.issuer)
        }
        var issuers: [TrustedIssuer] = []
        if let jwks = command.jwks {
            issuers = [TrustedIssuer(issuer: command.issuer, keys: try await keys(from: jwks, transport: transport))]
        } else if !command.introspect {
            // Without --introspect, tokens are JWTs checked here with the issuer's published keys.
            guard let jwksURI = metadata?.jwksURI else {
                throw OIDCError(.invalidArgument, "The issuer's discovery document names no jwks_uri: give --jwks FILE|URL, or --introspect.")
            }
            issuers = [TrustedIssuer(issuer: command.issuer, keys: JWKSCache(transport: transport, jwksURI: jwksURI, logger: CLILog.logger(.jwks)))]
        }
        var introspection: IntrospectionSettings?
        if command.introspect, let clientID = command.clientId, let secretFile = command.clientSecretFile, let metadata {
            guard metadata.introspectionEndpoint != nil else {
                throw OIDCError(.invalidArgument, "The issuer's discovery document names no introspection_endpoint, which --introspect needs.")
            }
            let secret = try ClientSecretFile.read(secretFile)
            let client = TokenClient(
                provider: try metadata.configuration(confidential: true), clientID: clientID, authentication: .clientSecretBasic(secret),
                transport: transport, now: CLIClock.now, logger: CLILog.logger(.token)
            )
            introspection = IntrospectionSettings(client: client)
        }
        return ResourceServerSources(issuers: issuers, introspection: introspection)
    }

    /// `--jwks FILE`: the file's keys, read and checked now (a cache over those bytes, never
    /// fetched again); `--jwks URL`: a cache that fetches it, with a first fetch now.
    static func keys(from location: String, transport: any HTTPTransport) async throws -> JWKSCache {
        if location.hasPrefix("https://") || location.hasPrefix("http://") {
            guard let url = URL(string: location) else { throw ValidationError("--jwks: '\(UntrustedText.sanitized(location))' is not a URL") }
            do { try EndpointURLPolicy.validate(url, role: "JWKS URL") } catch { throw ValidationError("--jwks: \(error.message)") }
            let cache = JWKSCache(transport: transport, jwksURI: url, logger: CLILog.logger(.jwks))
            _ = try await cache.keys()
            return cache
        }
        guard let data = FileManager.default.contents(atPath: location) else {
            throw ValidationError("--jwks: cannot read the file '\(location)'")
        }
        guard data.count <= JWKSSource.maximumSize else { throw ValidationError("--jwks: the file is over 1 MiB") }
        let bytes = Array(data)
        do { _ = try JWKSet(json: bytes) } catch { throw ValidationError("--jwks: \(error.message)") }
        return JWKSCache(logger: CLILog.logger(.jwks)) { bytes }
    }

    /// The kit's configuration for a server at `base`: the resource is the URL it serves (the
    /// metadata's `resource`, RFC 9728 §3.3), and tokens must carry `--audience`.
    func configuration(base: String, scopes: [String], command: ResourceServerCommand) throws -> ResourceServer.Configuration {
        guard let resource = URL(string: base) else { throw OIDCError(.invalidArgument, "The resource server's URL \(base) is not a URL.") }
        var configuration = ResourceServer.Configuration(resource: resource, issuers: issuers)
        // Proofs name the URL printed on stdout, whatever Host a client sent.
        configuration.publicOrigin = resource
        configuration.audiences = [command.audience]
        configuration.introspection = introspection
        configuration.scopesSupported = scopes
        configuration.now = CLIClock.now
        // The store on the same clock (OIDC_TEST_CLOCK_OFFSET): it compares the proofs' records
        // with the caller's clock anyway, and with its own for the rest.
        configuration.replayStore = InMemoryReplayStore(now: CLIClock.now)
        configuration.dpop = ResourceServer.DPoPSettings(mode: command.dpop.kitMode)
        if command.nonce { configuration.dpop.nonces = try DPoPServerNonces() }
        return configuration
    }
}

extension ResourceServerCommand.DPoPMode {
    var kitMode: ResourceServer.DPoPSettings.Mode {
        switch self {
        case .off: .off
        case .allowed: .allowed
        case .required: .required
        }
    }
}
