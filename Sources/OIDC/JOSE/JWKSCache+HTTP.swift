public import Foundation
public import Logging

extension JWKSCache {
    /// A cache that fetches `jwksURI` through `transport` (https, or http on loopback; 1 MiB at most).
    ///
    /// - Parameters:
    ///   - transport: fetches the document.
    ///   - jwksURI: the provider's `jwks_uri`.
    ///   - maximumAge: seconds a fetched set is used (5 minutes by default).
    ///   - unknownKeyCooldown: seconds before a refetch for an unknown `kid` (1 minute).
    ///   - logger: where fetches and cache decisions are logged; `nil` (the default) logs nothing.
    public init(
        transport: any HTTPTransport, jwksURI: URL, maximumAge: TimeInterval = 300, unknownKeyCooldown: TimeInterval = 60, logger: Logger? = nil
    ) {
        self.init(maximumAge: maximumAge, unknownKeyCooldown: unknownKeyCooldown, logger: logger) { () async throws(OIDCError) -> [UInt8] in
            try EndpointURLPolicy.validate(jwksURI, role: "JWKS URI")
            var headers = HTTPHeaders()
            headers.add("Accept", "application/json, application/jwk-set+json")
            let response = try await transport.send(HTTPRequest(method: "GET", url: jwksURI, headers: headers))
            guard response.status == 200 else {
                throw HTTPErrorMapping.unexpectedStatus(response, endpoint: jwksURI, what: "JWKS")
            }
            return response.body
        }
    }
}
