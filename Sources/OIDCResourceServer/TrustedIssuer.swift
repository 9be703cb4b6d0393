public import Foundation
public import OIDC

/// An authorization server whose access tokens a resource accepts: its issuer identifier, compared
/// exactly with a token's `iss`, and its keys.
public struct TrustedIssuer: Sendable {
    /// The issuer identifier, exactly as the server's tokens carry it in `iss`.
    public var issuer: String
    /// The issuer's keys (its `jwks_uri`), fetched on demand and cached.
    public var keys: JWKSCache

    /// An issuer with its key cache.
    public init(issuer: String, keys: JWKSCache) {
        self.issuer = issuer
        self.keys = keys
    }

    /// An issuer whose keys are fetched from `jwksURI` through `transport` (https, or http on loopback).
    public init(issuer: String, jwksURI: URL, transport: any HTTPTransport) {
        self.init(issuer: issuer, keys: JWKSCache(transport: transport, jwksURI: jwksURI))
    }
}
