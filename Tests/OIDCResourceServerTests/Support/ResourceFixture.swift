import Foundation
import OIDC
import OIDCResourceServer
import OIDCTesting
import Synchronization

/// A clock tests move by hand: the resource server's `now`, never the wall clock's passing.
final class ManualClock: Sendable {
    private let date: Mutex<Date>
    init(_ start: Date = Date()) { date = Mutex(start) }
    func now() -> Date { date.withLock { $0 } }
    func advance(_ seconds: TimeInterval) { date.withLock { $0 += seconds } }
}

/// A TestProvider over real loopback HTTP, and a resource server that trusts it (its keys fetched
/// from the provider's `jwks_uri`), with the resource `https://api.example/orders`.
struct ResourceFixture: Sendable {
    static let resource = URL(string: "https://api.example/orders")!
    static let target = "https://api.example/orders/42"

    let provider: TestProvider
    let server: ResourceServer
    let clock: ManualClock

    /// Runs `body` with a provider and a server configured by `configure`.
    static func run<T: Sendable>(
        provider configuration: TestProvider.Configuration = .init(),
        _ configure: (inout ResourceServer.Configuration) throws -> Void = { _ in },
        _ body: (ResourceFixture) async throws -> T
    ) async throws -> T {
        try await withTestProvider(configuration) { provider in
            let clock = ManualClock()
            var settings = ResourceServer.Configuration(
                resource: resource,
                issuers: [TrustedIssuer(issuer: provider.issuer, jwksURI: URL(string: provider.jwksURI)!, transport: NIOHTTPTransport.shared)]
            )
            settings.now = { clock.now() }
            try configure(&settings)
            return try await body(ResourceFixture(provider: provider, server: try ResourceServer(settings), clock: clock))
        }
    }

    /// An RFC 9068 token for this resource.
    func token(scope: String = "orders:read", jkt: String? = nil, x5t: String? = nil, extra: [String: Any] = [:]) async throws -> String {
        try await provider.issueJWTAccessToken(
            audience: Self.resource.absoluteString, scope: scope, dpopKeyThumbprint: jkt, certificateThumbprint: x5t, extraClaims: extra
        )
    }

    /// Claims of a valid RFC 9068 token for this resource, for tests that change one.
    func claims(_ changes: [String: Any] = [:]) -> [String: Any] {
        let now = Int(clock.now().timeIntervalSince1970)
        var claims: [String: Any] = [
            "iss": provider.issuer, "sub": "user-1", "aud": Self.resource.absoluteString, "client_id": "test-client",
            "scope": "orders:read", "iat": now, "exp": now + 300, "jti": UUID().uuidString,
        ]
        claims.merge(changes) { _, new in new }
        return claims
    }

    static func request(_ headers: [(String, String)], method: String = "GET", url: String = target, certificate: [UInt8]? = nil) -> ResourceRequest {
        ResourceRequest(method: method, url: URL(string: url)!, headers: HTTPHeaders(headers), peerCertificate: certificate)
    }

    static func bearer(_ token: String, method: String = "GET", url: String = target) -> ResourceRequest {
        request([("Authorization", "Bearer " + token)], method: method, url: url)
    }

    /// A DPoP request: the token under the DPoP scheme with a fresh proof by `key`.
    func dpop(
        _ token: String, key: DPoPKey, method: String = "GET", url: String = target, nonce: String? = nil, proofURL: String? = nil,
        proofMethod: String? = nil, iat: Date? = nil
    ) throws -> ResourceRequest {
        let proof = try key.proof(
            method: proofMethod ?? method, url: URL(string: proofURL ?? url)!, accessToken: Secret(token), nonce: nonce, now: iat ?? clock.now()
        )
        return Self.request([("Authorization", "DPoP " + token), ("DPoP", proof)], method: method, url: url)
    }

    /// The refusal `verify` throws for `request`; fails the test when it succeeds.
    func refusal(_ request: ResourceRequest, requiring scopes: Set<String> = []) async throws -> AccessRefusal {
        do {
            let access = try await server.verify(request, requiring: scopes)
            throw UnexpectedAccess(subject: access.subject)
        } catch let refusal as AccessRefusal {
            return refusal
        }
    }

    struct UnexpectedAccess: Error {
        var subject: String?
    }
}

extension AccessRefusal {
    /// The `WWW-Authenticate` values, in order.
    var challenges: [String] { headers.values("WWW-Authenticate") }
}
