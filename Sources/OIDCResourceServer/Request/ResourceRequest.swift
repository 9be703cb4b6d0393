public import Foundation
public import OIDC

/// What the kit needs of an HTTP request, whatever framework received it: the method, the URL the
/// client addressed, every header field as received, and the TLS peer's certificate.
///
/// ```swift
/// let request = ResourceRequest(
///     method: "GET", url: URL(string: "https://api.example/orders")!,
///     headers: HTTPHeaders([("Authorization", "DPoP eyJ…"), ("DPoP", "eyJ…")])
/// )
/// ```
public struct ResourceRequest: Sendable {
    /// The method, such as `GET` (compared with a DPoP proof's `htm` exactly, case-sensitively).
    public var method: String
    /// The URL as the client addressed it: scheme, host and port as the client saw them (behind a
    /// proxy, the public ones, not the backend's), path and query. A DPoP proof's `htu` is
    /// compared with it (without query and fragment, RFC 9449 §4.3).
    public var url: URL
    /// Every header field as received, duplicates and order kept: two `Authorization` or two `DPoP`
    /// fields are refused, so a framework that merges them into one would hide an attack.
    public var headers: HTTPHeaders
    /// The DER of the client's TLS certificate, when the connection presented one (for
    /// certificate-bound tokens, RFC 8705 §3).
    public var peerCertificate: [UInt8]?

    /// A request.
    public init(method: String, url: URL, headers: HTTPHeaders, peerCertificate: [UInt8]? = nil) {
        self.method = method
        self.url = url
        self.headers = headers
        self.peerCertificate = peerCertificate
    }
}
