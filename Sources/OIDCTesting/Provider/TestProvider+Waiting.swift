extension TestProvider {
    /// Returns when the next request to `endpoint` arrives: one that comes after this call (with
    /// `grantType`, the next token request that carries that `grant_type`). It returns as the
    /// provider receives the request, before it answers: a test can then act while the request is
    /// in flight (cancel its caller, log out, release a held store).
    ///
    /// It waits on the event, not on a clock: give the test a `.timeLimit` for a request that may
    /// never come.
    ///
    ///     let refreshing = Task { try await session.validTokens() }
    ///     try await provider.nextRequest(.token)   // the refresh has reached the provider
    ///     refreshing.cancel()
    ///
    /// - Throws: `CancellationError` when the waiting task is cancelled first.
    public func nextRequest(_ endpoint: Endpoint, grantType: String? = nil) async throws {
        try await state.waitForNext(counter(endpoint, grantType: grantType))
    }

    /// Returns once `count` requests have reached `endpoint` (with `grantType`, token requests that
    /// carry that `grant_type`) since the provider started or ``resetCounters()`` was last called,
    /// at once if they already have: the event that ``requestCount(_:)`` and ``grantCount(_:)``
    /// count, awaited instead of polled.
    ///
    ///     try await provider.waitForRequests(.token, count: 3, grantType: "urn:ietf:params:oauth:grant-type:device_code")
    ///
    /// - Throws: `CancellationError` when the waiting task is cancelled first.
    public func waitForRequests(_ endpoint: Endpoint, count: Int = 1, grantType: String? = nil) async throws {
        try await state.wait(until: counter(endpoint, grantType: grantType), reaches: count)
    }

    private func counter(_ endpoint: Endpoint, grantType: String?) -> RequestWaiters.Counter {
        if let grantType, endpoint == .token { .grant(grantType) } else { .endpoint(endpoint) }
    }
}
