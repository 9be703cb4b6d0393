import ArgumentParser
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import OIDC

/// `--jwks FILE|URL`: a JWKS from a file, or fetched over https (plain http only on loopback).
enum JWKSSource {
    static let maximumSize = 1 << 20

    static func load(_ location: String) async throws -> JWKSet {
        if location.hasPrefix("https://") || location.hasPrefix("http://") {
            guard let url = URL(string: location) else { throw ValidationError("--jwks: '\(location)' is not a URL") }
            try EndpointPolicy.validate(url, role: "JWKS URL")
            return try JWKSet(json: try await fetch(url))
        }
        guard let data = FileManager.default.contents(atPath: location) else {
            throw ValidationError("--jwks: cannot read the file '\(location)'")
        }
        guard data.count <= maximumSize else { throw ValidationError("--jwks: the file is over 1 MiB") }
        return try JWKSet(json: Array(data))
    }

    private static func fetch(_ url: URL) async throws -> [UInt8] {
        var request = URLRequest(url: url, timeoutInterval: 15)
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        let session = URLSession(configuration: .ephemeral)
        defer { session.finishTasksAndInvalidate() }
        let data: Data
        let response: URLResponse
        do {
            (data, response) = try await session.data(for: request)
        } catch {
            throw OIDCError(
                .temporarilyUnavailable, "The JWKS at \(url.absoluteString) could not be fetched (\(error.localizedDescription)); try again later.",
                context: ["url": url.absoluteString]
            )
        }
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        guard status == 200 else {
            throw OIDCError(
                status >= 500 ? .temporarilyUnavailable : .malformedResponse,
                "The JWKS at \(url.absoluteString) answered HTTP \(status).", context: ["url": url.absoluteString]
            )
        }
        guard data.count <= maximumSize else { throw OIDCError(.malformedResponse, "The JWKS at \(url.absoluteString) is over 1 MiB.") }
        return Array(data)
    }
}
