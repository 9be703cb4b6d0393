import ArgumentParser
import Foundation
import OIDC

/// `--jwks FILE|URL`: a JWKS from a file, or fetched over https (plain http only on loopback).
enum JWKSSource {
    static let maximumSize = 1 << 20

    static func load(_ location: String) async throws -> JWKSet {
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
}
