public import Foundation

/// Sends one HTTP request and returns the whole response: the boundary between the library and the
/// network. ``NIOHTTPTransport`` is the production implementation; plug in your own (a proxy-aware
/// client, a recorder) by conforming to this protocol.
///
/// Implementations must honour ``HTTPRequestOptions`` (timeout, size limit, no redirects unless
/// asked) and throw only ``OIDCError``: ``OIDCError/Code/networkFailure`` and
/// ``OIDCError/Code/timedOut`` for the network, ``OIDCError/Code/tlsFailure`` and
/// ``OIDCError/Code/pinMismatch`` for TLS, ``OIDCError/Code/responseTooLarge`` for an oversized body.
/// Any HTTP status, 4xx and 5xx included, is a response, not an error.
public protocol HTTPTransport: Sendable {
    /// Sends `request` within the limits of `options` and returns the whole response, whatever its
    /// status.
    ///
    /// - Throws: only ``OIDCError``, with the codes the protocol's overview lists.
    func send(_ request: HTTPRequest, options: HTTPRequestOptions) async throws(OIDCError) -> HTTPResponse

    /// Whether the transport presents a TLS client certificate to servers that ask (mutual TLS, RFC
    /// 8705): a ``TokenClient`` then uses the provider's `mtls_endpoint_aliases`, and the provider
    /// may bind the access tokens it issues to that certificate. `false` unless the transport says
    /// otherwise; a transport that wraps another should forward it.
    var presentsClientCertificate: Bool { get }
}

extension HTTPTransport {
    /// `false`: a transport presents no client certificate unless it says so.
    public var presentsClientCertificate: Bool { false }

    /// Sends `request` with the default ``HTTPRequestOptions``: 30 seconds, 1 MiB, no redirects.
    public func send(_ request: HTTPRequest) async throws(OIDCError) -> HTTPResponse {
        try await send(request, options: HTTPRequestOptions())
    }
}

/// Per-request limits.
public struct HTTPRequestOptions: Sendable, Equatable {
    /// For the whole exchange: connecting, TLS, sending and receiving. 30 s by default.
    public var timeout: Duration
    /// Largest response body accepted; 1 MiB by default (discovery documents, JWKS and token
    /// responses are a few KiB).
    public var maximumResponseSize: Int
    /// Whether 3xx responses are followed (at most 5 times, same scheme or http→https only; never
    /// for a request with a `DPoP` proof, which names its URL).
    /// Off by default, and never for token endpoints: a redirected POST could carry the code
    /// elsewhere.
    public var followRedirects: Bool

    /// Options with these limits; by default 30 seconds, 1 MiB (`1 << 20` bytes) and no redirects.
    public init(timeout: Duration = .seconds(30), maximumResponseSize: Int = 1 << 20, followRedirects: Bool = false) {
        self.timeout = timeout
        self.maximumResponseSize = maximumResponseSize
        self.followRedirects = followRedirects
    }
}

/// Header fields in order, names compared case-insensitively.
public struct HTTPHeaders: Sendable, Equatable, Sequence, ExpressibleByDictionaryLiteral {
    /// Every field in the order it was added, names as given.
    public private(set) var fields: [(name: String, value: String)] = []

    /// No fields.
    public init() {}

    /// These fields, in this order; a name may appear more than once.
    public init(_ fields: [(String, String)]) {
        for (name, value) in fields { add(name, value) }
    }

    /// The fields of a literal such as `["Accept": "application/json"]`, in the literal's order.
    public init(dictionaryLiteral elements: (String, String)...) {
        self.init(elements)
    }

    /// The first value of `name`, or `nil`.
    public subscript(name: String) -> String? {
        fields.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value
    }

    /// Every value of `name`, in order.
    public func values(_ name: String) -> [String] {
        fields.filter { $0.name.caseInsensitiveCompare(name) == .orderedSame }.map(\.value)
    }

    /// Appends a field; fields already named `name` stay (see ``set(_:_:)`` to replace them).
    public mutating func add(_ name: String, _ value: String) {
        fields.append((name, value))
    }

    /// Replaces every value of `name` with `value`.
    public mutating func set(_ name: String, _ value: String) {
        remove(name)
        add(name, value)
    }

    /// Removes every field named `name`, compared case-insensitively.
    public mutating func remove(_ name: String) {
        fields.removeAll { $0.name.caseInsensitiveCompare(name) == .orderedSame }
    }

    /// Iterates over ``fields`` in order.
    public func makeIterator() -> IndexingIterator<[(name: String, value: String)]> { fields.makeIterator() }

    /// Whether both hold the same fields in the same order: names compared case-insensitively
    /// (RFC 9110 §5.1), values exactly.
    public static func == (lhs: HTTPHeaders, rhs: HTTPHeaders) -> Bool {
        lhs.fields.elementsEqual(rhs.fields) { $0.name.caseInsensitiveCompare($1.name) == .orderedSame && $0.value == $1.value }
    }
}

/// An HTTP request with its whole body.
public struct HTTPRequest: Sendable {
    /// The method, such as `GET` or `POST`; `GET` by default.
    public var method: String
    /// The absolute URL to send the request to.
    public var url: URL
    /// The caller's header fields. ``NIOHTTPTransport`` writes `Host` and `Content-Length` itself, and
    /// a `User-Agent` when there is none.
    public var headers: HTTPHeaders
    /// The body bytes; empty by default.
    public var body: [UInt8]

    /// A request; a `GET` without header fields or body by default.
    public init(method: String = "GET", url: URL, headers: HTTPHeaders = HTTPHeaders(), body: [UInt8] = []) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
    }
}

/// An HTTP response with its whole body.
public struct HTTPResponse: Sendable {
    /// The status code, such as `200` or `401`.
    public var status: Int
    /// The response's header fields, in order.
    public var headers: HTTPHeaders
    /// The whole body, within the request's ``HTTPRequestOptions/maximumResponseSize``.
    public var body: [UInt8]

    /// A response (for ``HTTPTransport`` implementations and tests).
    public init(status: Int, headers: HTTPHeaders = HTTPHeaders(), body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }
}
