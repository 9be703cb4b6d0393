extension JWKSCache {
    /// The provider's keys fetched again after a token named a `kid` the cached set lacks; `nil`
    /// within the cool-down. The verifiers' own step, public by mistake.
    ///
    /// - Throws: as ``keys()``.
    @available(*, deprecated, message: "keysAfterUnknownKey() is internal plumbing: IDTokenVerifier and JARMVerifier, given this cache, fetch again on an unknown kid themselves")
    public func keysAfterUnknownKey() async throws(OIDCError) -> JWKSet? {
        try await refetchAfterUnknownKey()
    }
}

extension JWKSCache {
    /// How many fetches ran (for tests and metrics).
    @available(*, deprecated, message: "fetchCount is test instrumentation: count fetches in the closure you give JWKSCache(maximumAge:unknownKeyCooldown:maximumStaleAge:now:logger:fetch:)")
    public var fetchCount: Int { fetchesRun }
}
