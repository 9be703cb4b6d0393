public import Foundation
public import OIDC

/// Opaque access tokens, checked by asking the authorization server (RFC 7662): the client that
/// asks (its provider's `introspection_endpoint` and its client authentication) and how answers
/// are cached.
///
/// An active answer is cached until the token's `exp` (capped by ``maximumCacheDuration``), an
/// inactive one for ``inactiveCacheDuration``, both in a table of at most ``cacheCapacity``
/// entries keyed by the token's SHA-256 (the token itself is never kept). Concurrent requests
/// with the same token share one introspection.
public struct IntrospectionSettings: Sendable {
    /// Asks the provider: its `TokenClient.provider` must have an introspection endpoint, and
    /// its authentication is how this resource proves itself to it.
    public var client: TokenClient
    /// The most answers cached at once (10 000 by default); the oldest go first.
    public var cacheCapacity = 10_000
    /// How long a "not active" answer is cached, in seconds (10 by default): a token the server
    /// just issued is not refused for long, and a flood of junk tokens is not asked about twice.
    public var inactiveCacheDuration: TimeInterval = 10
    /// The longest an active answer is cached, in seconds, whatever its `exp` (1 hour by default):
    /// how long a revoked token may still be taken. An answer without `exp` is cached for a minute
    /// at most.
    public var maximumCacheDuration: TimeInterval = 3_600
    /// Whether an active answer must name this resource in `aud` (off by default). RFC 7662 makes
    /// `aud` optional, and many servers leave it out, so by default an answer without it is taken
    /// (one with it must name one of the configuration's audiences). Turn it on where the server
    /// issues tokens for other resources too and says which in `aud`: an answer without `aud` is
    /// then refused (``AccessRefusal/Rule/audienceMismatch``).
    public var requiresAudience = false

    /// Introspection through `client`.
    public init(client: TokenClient) {
        self.client = client
    }
}
