import ArgumentParser
import Foundation
import OIDC

/// `--jwks FILE|URL`: a JWKS from a file, or fetched over https (plain http only on loopback).
enum JWKSSource {
    static let maximumSize = 1 << 20

    static func load(_ location: String) async throws -> JWKSet {
        do { return try await loadAsGiven(location) } catch { throw await discoveryDocumentRefusal(location, after: error) ?? error }
    }

    private static func loadAsGiven(_ location: String) async throws -> JWKSet {
        if location.hasPrefix("https://") || location.hasPrefix("http://") {
            guard let url = URL(string: location) else { throw ValidationError("--jwks: '\(location)' is not a URL") }
            do { try EndpointURLPolicy.validate(url, role: "JWKS URL") } catch { throw ValidationError("--jwks: \(error.message)") }
            return try await withNIOHTTPTransport(logger: CLILog.logger(.transport)) { try await JWKSCache(transport: $0, jwksURI: url, logger: CLILog.logger(.jwks)).keys() }
        }
        guard let data = FileManager.default.contents(atPath: location) else {
            throw ValidationError("--jwks: cannot read the file '\(location)'")
        }
        guard data.count <= maximumSize else { throw ValidationError("--jwks: the file is over 1 MiB") }
        do { return try JWKSet(json: Array(data)) } catch { throw ValidationError("--jwks: \(error.message)") }
    }

    /// When a JWKS could not be read for want of a `keys` array and `location` holds a provider's
    /// discovery document instead (OpenID Connect Discovery, RFC 8414: the common mistake of giving
    /// the issuer's `/.well-known/...` URL), a usage error (exit 2) that names its `jwks_uri`;
    /// otherwise `nil`, and the error stands.
    static func discoveryDocumentRefusal(_ location: String, after error: any Error) async -> OIDCError? {
        let text = (error as? OIDCError)?.message ?? String(describing: error)
        guard text.contains("'keys'") else { return nil }
        let document: [UInt8]?
        if location.hasPrefix("https://") || location.hasPrefix("http://") {
            guard let url = URL(string: location) else { return nil }
            var headers = HTTPHeaders()
            headers.add("Accept", "application/json")
            document = try? await withNIOHTTPTransport(logger: CLILog.logger(.transport)) { transport in
                let response = try await transport.send(HTTPRequest(method: "GET", url: url, headers: headers), options: HTTPRequestOptions())
                return response.status == 200 ? response.body : nil
            }
        } else {
            document = FileManager.default.contents(atPath: location).map(Array.init)
        }
        guard let document, document.count <= maximumSize, let object = try? StrictJSONParser.parseObject(document),
            object["keys"] == nil, let jwksURI = object["jwks_uri"]?.stringValue
        else { return nil }
        let uri = UntrustedText.sanitized(jwksURI, limit: 300)
        return OIDCError(
            .invalidArgument,
            "--jwks: \(UntrustedText.sanitized(location, limit: 300)) is a discovery document, not a JWKS; its jwks_uri is \(uri): give --jwks \(uri)"
        )
    }
}
