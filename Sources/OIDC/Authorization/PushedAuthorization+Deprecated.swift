public import Foundation

extension PushedAuthorization {
    /// Reads a `201 Created` answer's body: the parsing step of
    /// ``TokenClient/pushAuthorizationRequest(_:requestObject:)``, public by mistake.
    ///
    /// - Throws: ``OIDCError/Code/malformedResponse`` for a body that is not a JSON object, or that
    ///   lacks a non-empty string `request_uri` or a positive whole number `expires_in`.
    @available(*, deprecated, message: "init(json:now:) is internal plumbing: TokenClient.pushAuthorizationRequest(_:requestObject:) returns the PushedAuthorization it reads")
    public init(json: [UInt8], now: Date = Date()) throws(OIDCError) {
        try self.init(responseBody: json, now: now)
    }
}
