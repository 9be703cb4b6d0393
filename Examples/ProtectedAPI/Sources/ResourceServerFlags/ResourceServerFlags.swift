import ArgumentParser
import Foundation
import OIDC
import OIDCResourceServer

/// `oidc resource-server`'s flags, so that both programs take what the command takes and any test
/// written for the command runs against them.
public struct ResourceServerFlags: ParsableArguments, Sendable {
    @Option(help: "The issuer whose tokens are accepted (iss, exact).")
    public var issuer: String

    @Option(help: "The audience tokens must carry for this resource (aud must contain it), such as https://api.example.com.")
    public var audience: String

    @Option(help: "The port to listen on (0: any free port).")
    public var port: Int = 0

    @Option(help: "The loopback address to bind: 127.0.0.1 or ::1.")
    public var host: String = "127.0.0.1"

    @Option(help: "DPoP (RFC 9449): off (Bearer only), allowed (Bearer and DPoP), or required (DPoP only).")
    public var dpop: String = "allowed"

    @Option(help: "A scope every request's token must carry; repeat for several.")
    public var requireScope: [String] = []

    @Option(help: "An authentication context class (acr) the token's login must have, one of those given; repeat for several (RFC 9470).")
    public var requireAcr: [String] = []

    @Option(help: "The most seconds since the user authenticated (the token's auth_time; RFC 9470).")
    public var maxAge: Int?

    @Option(help: "A rich authorization detail type (RFC 9396) the token must hold; repeat for several.")
    public var requireDetailType: [String] = []

    @Flag(help: "Require server-provided DPoP nonces (RFC 9449 §9).")
    public var nonce = false

    @Option(help: "The issuer's keys: a JWKS file, or an https URL. Default: the jwks_uri of the issuer's discovery document.")
    public var jwks: String?

    @Flag(help: "Check tokens at the issuer's introspection endpoint (RFC 7662), as --client-id with --client-secret-file.")
    public var introspect = false

    @Option(help: "The client id to authenticate introspection requests with (client_secret_basic).")
    public var clientId: String?

    @Option(help: "A private file (chmod 600) holding the secret of --client-id.")
    public var clientSecretFile: String?

    public init() {}

    public func validate() throws {
        guard (0...65_535).contains(port) else { throw ValidationError("--port must be 0 to 65535") }
        guard ["127.0.0.1", "::1"].contains(host) else { throw ValidationError("--host must be 127.0.0.1 or ::1 (loopback only)") }
        guard let url = URL(string: issuer), let issuerHost = url.host(), url.query() == nil, url.fragment() == nil,
            url.scheme == "https" || (url.scheme == "http" && ["127.0.0.1", "::1", "localhost"].contains(issuerHost))
        else {
            throw ValidationError("--issuer must be an https URL without a query or fragment (http only on loopback)")
        }
        guard !audience.isEmpty, audience.utf8.count <= 2048, !audience.unicodeScalars.contains(where: { $0 == " " || Self.isControl($0) }),
            !audience.contains("://") || URL(string: audience).map({ $0.host() != nil && $0.fragment() == nil }) == true
        else {
            throw ValidationError("--audience must be one value (at most 2048 bytes, no spaces or control characters; a URL without a fragment)")
        }
        guard ResourceServer.DPoPSettings.Mode(rawValue: dpop) != nil else { throw ValidationError("--dpop must be off, allowed or required") }
        for scope in requireScope where scope.isEmpty || scope.unicodeScalars.contains(where: { $0 == " " || $0 == "\"" || $0 == "\\" || Self.isControl($0) }) {
            throw ValidationError("--require-scope must be one scope token, without spaces, quotes or control characters")
        }
        for acr in requireAcr where acr.isEmpty || acr.unicodeScalars.contains(where: { $0 == " " || $0 == "\"" || $0 == "\\" || Self.isControl($0) }) {
            throw ValidationError("--require-acr must be one acr value, without spaces, quotes or control characters")
        }
        for type in requireDetailType where type.isEmpty || type.unicodeScalars.contains(where: Self.isControl) {
            throw ValidationError("--require-detail-type must be a detail type: printable text, not empty")
        }
        if let maxAge, !(0...315_360_000).contains(maxAge) { throw ValidationError("--max-age must be 0 to 315360000 seconds") }
        if nonce, dpop == "off" { throw ValidationError("--nonce needs --dpop allowed or required") }
        if introspect, clientId == nil || clientSecretFile == nil {
            throw ValidationError("--introspect needs --client-id and --client-secret-file")
        }
        if !introspect, clientId != nil || clientSecretFile != nil {
            throw ValidationError("--client-id and --client-secret-file are for --introspect")
        }
        if let clientId, clientId.isEmpty || clientId.unicodeScalars.contains(where: Self.isControl) {
            throw ValidationError("--client-id must not be empty or hold control characters")
        }
        if let jwks, jwks.isEmpty { throw ValidationError("--jwks must name a file or a URL") }
    }

    static func isControl(_ scalar: Unicode.Scalar) -> Bool { scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) }

    /// What the routes require of every token: these scopes, this authentication, these detail types.
    public var scopes: Set<String> { Set(requireScope) }
    /// `--require-scope`, in order, without repeats (the metadata's `scopes_supported`).
    var scopeList: [String] { requireScope.reduce(into: []) { list, scope in if !list.contains(scope) { list.append(scope) } } }
    public var authentication: AuthenticationRequirement? {
        requireAcr.isEmpty && maxAge == nil ? nil : AuthenticationRequirement(acrValues: requireAcr, maxAge: maxAge)
    }
    public var detailTypes: Set<String> { Set(requireDetailType) }

    /// The kit's configuration for a server at `base` (its resource, and the URL proofs name):
    /// the issuer's keys (`--jwks`, or discovery's `jwks_uri`) or its introspection endpoint.
    public func configuration(base: URL, transport: any HTTPTransport) async throws -> ResourceServer.Configuration {
        var issuers: [TrustedIssuer] = []
        var introspection: IntrospectionSettings?
        if let jwks {
            issuers = [TrustedIssuer(issuer: issuer, keys: try await Self.keys(jwks, transport: transport))]
        }
        if jwks == nil || introspect {
            let metadata = try await ProviderDiscovery(transport: transport).metadata(for: issuer)
            if introspect, let clientId, let clientSecretFile {
                let secret: Secret
                do { secret = try Secret.fromFile(atPath: clientSecretFile) } catch {
                    throw ValidationError("--client-secret-file: \(error.message)")
                }
                let client = TokenClient(
                    provider: try metadata.configuration(confidential: true), clientID: clientId,
                    authentication: .clientSecretBasic(secret), transport: transport)
                introspection = IntrospectionSettings(client: client)
            } else if jwks == nil {
                guard let jwksURI = metadata.jwksURI else { throw ValidationError("--issuer: its discovery document names no jwks_uri; give --jwks") }
                issuers = [TrustedIssuer(issuer: issuer, jwksURI: jwksURI, transport: transport)]
            }
        }
        var configuration = ResourceServer.Configuration(resource: base, issuers: issuers)
        configuration.publicOrigin = base
        configuration.audiences = [audience]
        configuration.introspection = introspection
        configuration.scopesSupported = scopeList
        configuration.dpop = ResourceServer.DPoPSettings(mode: ResourceServer.DPoPSettings.Mode(rawValue: dpop) ?? .allowed)
        if nonce { configuration.dpop.nonces = try DPoPServerNonces() }
        return configuration
    }

    /// `--jwks FILE` (read now, never again) or `--jwks URL` (fetched now, then cached).
    static func keys(_ location: String, transport: any HTTPTransport) async throws -> JWKSCache {
        if location.hasPrefix("https://") || location.hasPrefix("http://") {
            guard let url = URL(string: location), let host = url.host(), url.scheme == "https" || ["127.0.0.1", "::1", "localhost"].contains(host) else {
                throw ValidationError("--jwks: an https URL (http only on loopback), or a file")
            }
            let cache = JWKSCache(transport: transport, jwksURI: url)
            _ = try await cache.keys()
            return cache
        }
        guard let data = FileManager.default.contents(atPath: location), data.count <= 1 << 20 else {
            throw ValidationError("--jwks: cannot read the file '\(location)' (or it is over 1 MiB)")
        }
        let bytes = Array(data)
        do { _ = try JWKSet(json: bytes) } catch { throw ValidationError("--jwks: \(error.message)") }
        return JWKSCache { bytes }
    }
}
