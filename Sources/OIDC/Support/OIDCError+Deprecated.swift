extension OIDCError.ProviderError {
    /// An OAuth error with its optional description and URI.
    @available(*, deprecated, message: "ProviderError is what the library reads from a provider's error answer: read OIDCError.providerError; to raise your own error, use OIDCError(_:_:context:providerError:) without one")
    public init(error: String, errorDescription: String? = nil, errorURI: String? = nil) {
        self.init(error, errorDescription: errorDescription, errorURI: errorURI)
    }
}
