public import Foundation
public import OIDC
public import OIDCTesting

/// JWTs of a workload identity issuer, for the JWT bearer grant's tests (RFC 7523): a provider
/// that trusts ``issuer`` with a key, and assertions signed by it.
public enum WorkloadAssertion {
    /// The issuer of the workload JWTs.
    public static let issuer = "https://workload.example"

    /// `configuration` trusting the workload issuer's JWTs signed by `key`.
    public static func trusting(_ key: TestSigningKey, in configuration: TestProvider.Configuration) throws -> TestProvider.Configuration {
        var configuration = configuration
        configuration.trustedAssertionIssuers = [.init(issuer: issuer, jwks: try key.jwksJSON)]
        return configuration
    }

    /// A JWT of the workload issuer about `subject` for `audience`, expiring `lifetime` seconds from now.
    public static func make(_ key: TestSigningKey, subject: String = "system:serviceaccount:ci:builder", audience: String, lifetime: Int = 600) throws -> Secret {
        let now = Int(Date().timeIntervalSince1970)
        return Secret(try key.sign(claims: ["iss": issuer, "sub": subject, "aud": audience, "iat": now, "exp": now + lifetime]))
    }
}
