public import Foundation

extension TokenSet {
    /// Reads a successful token response (RFC 6749 §5.1).
    @available(*, deprecated, message: "use the TokenClient grants (exchangeCode, refresh, clientCredentials, exchangeToken), which send the request and read the answer; build a TokenSet from its parts with TokenSet(accessToken:tokenType:…)")
    public init(tokenResponse body: [UInt8], requestedScopes: [String], receivedAt: Date) throws(OIDCError) {
        try self.init(tokenAnswer: body, requestedScopes: requestedScopes, receivedAt: receivedAt)
    }
}
