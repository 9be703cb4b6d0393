public import Foundation

extension DeviceAuthorization {
    /// Reads a device authorization response received at `receivedAt`.
    @available(*, deprecated, message: "use TokenClient.requestDeviceAuthorization(scopes:parameters:pkce:) (or RelyingParty.deviceLogin), which sends the request and reads the answer")
    public init(json: [UInt8], receivedAt: Date, scopes: [String] = []) throws(OIDCError) {
        try self.init(answer: json, receivedAt: receivedAt, scopes: scopes)
    }
}
