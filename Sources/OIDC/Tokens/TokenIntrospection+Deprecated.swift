extension TokenIntrospection {
    /// Reads an introspection response.
    @available(*, deprecated, message: "use TokenClient.introspect(_:hint:), which sends the request and reads the answer")
    public init(json: [UInt8]) throws(OIDCError) { try self.init(answer: json) }
}
