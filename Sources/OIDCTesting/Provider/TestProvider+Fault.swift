extension TestProvider {
    /// A failure the provider plays instead of (or before) its normal answer.
    public enum Fault: Sendable, Equatable {
        /// `503 Service Unavailable` with `Retry-After: 1` and a plain-text body.
        case serviceUnavailable
        /// `400` with `{"error":"invalid_grant"}` (RFC 6749 §5.2).
        case invalidGrant
        /// Any RFC 6749 §5.2 error, such as `("server_error", status: 500)` or `("invalid_client", status: 401)`.
        case oauthError(String, status: Int = 400)
        /// Wait this long, then answer normally.
        case delay(Duration)
        /// An RFC 9457 `application/problem+json` body with this status.
        case problemJSON(status: Int = 400)
        /// An HTML page with this status, as a proxy or load balancer in front of a provider sends.
        case htmlError(status: Int = 502)
        /// This status with no body at all, as some servers refuse a client (glewlwyd: `403`).
        case emptyBody(status: Int)
        /// `200` with `Content-Type: application/json` and a body cut off in the middle.
        case truncatedJSON
        /// `200` with a JSON body of about `byteCount` bytes (4 MiB by default).
        case oversizedBody(byteCount: Int = 4 * 1024 * 1024)
        /// Close the connection without answering.
        case dropConnection
        /// Answer normally, except that a token response says `"token_type": "Bearer"` even when it
        /// issued a DPoP-bound token: the silent downgrade RFC 9449 §5 lets a client detect, and a
        /// client that asked for DPoP must refuse. The token stays bound at the provider.
        case downgradeToBearer
    }

    /// The provider's endpoints, for request counters and faults.
    public enum Endpoint: String, Sendable, Hashable, CaseIterable {
        /// `{issuer}/.well-known/openid-configuration` (and the RFC 8414 metadata).
        case discovery
        /// `{issuer}/jwks`.
        case jwks
        /// `{issuer}/authorize`, and its sign-in page's form post.
        case authorize
        /// `{issuer}/token`.
        case token
        /// `{issuer}/userinfo`.
        case userinfo
        /// `{issuer}/revoke`.
        case revocation
        /// `{issuer}/introspect` (RFC 7662).
        case introspection
        /// `{issuer}/device_authorization` (RFC 8628 §3.1).
        case deviceAuthorization
        /// `{issuer}/device`: the device flow's verification page.
        case deviceVerification
        /// `{issuer}/logout`.
        case endSession
        /// `{issuer}/par`: pushed authorization requests (RFC 9126).
        case pushedAuthorization
        /// `{issuer}/bc-authorize`: backchannel authentication requests (OpenID CIBA Core 1.0 §7).
        case backchannelAuthentication
        /// `{issuer}/api/me`.
        case protectedResource
        /// `{issuer}/register`: dynamic client registration (RFC 7591), with ``Configuration/registration``.
        case registration
        /// `/resource` and `/resource/admin` at the provider's origin (``ProtectedResource``).
        case resource
        /// The resource's metadata document (RFC 9728), wherever ``ProtectedResource/metadataLocation`` puts it.
        case resourceMetadata
    }
}
