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
    func send(_ request: HTTPRequest, options: HTTPRequestOptions) async throws(OIDCError) -> HTTPResponse
}

extension HTTPTransport {
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
    /// Whether 3xx responses are followed (at most 5 times, same scheme or http→https only).
    /// Off by default, and never for token endpoints: a redirected POST could carry the code
    /// elsewhere.
    public var followRedirects: Bool

    public init(timeout: Duration = .seconds(30), maximumResponseSize: Int = 1 << 20, followRedirects: Bool = false) {
        self.timeout = timeout
        self.maximumResponseSize = maximumResponseSize
        self.followRedirects = followRedirects
    }
}

/// Header fields in order, names compared case-insensitively.
public struct HTTPHeaders: Sendable, Equatable, Sequence, ExpressibleByDictionaryLiteral {
    public private(set) var fields: [(name: String, value: String)] = []

    public init() {}

    public init(_ fields: [(String, String)]) {
        for (name, value) in fields { add(name, value) }
    }

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

    public mutating func add(_ name: String, _ value: String) {
        fields.append((name, value))
    }

    /// Replaces every value of `name` with `value`.
    public mutating func set(_ name: String, _ value: String) {
        remove(name)
        add(name, value)
    }

    public mutating func remove(_ name: String) {
        fields.removeAll { $0.name.caseInsensitiveCompare(name) == .orderedSame }
    }

    public func makeIterator() -> IndexingIterator<[(name: String, value: String)]> { fields.makeIterator() }

    public static func == (lhs: HTTPHeaders, rhs: HTTPHeaders) -> Bool {
        lhs.fields.elementsEqual(rhs.fields) { $0.name == $1.name && $0.value == $1.value }
    }
}

/// An HTTP request with its whole body.
public struct HTTPRequest: Sendable {
    public var method: String
    public var url: URL
    public var headers: HTTPHeaders
    public var body: [UInt8]

    public init(method: String = "GET", url: URL, headers: HTTPHeaders = HTTPHeaders(), body: [UInt8] = []) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
    }
}

/// An HTTP response with its whole body.
public struct HTTPResponse: Sendable {
    public var status: Int
    public var headers: HTTPHeaders
    public var body: [UInt8]

    public init(status: Int, headers: HTTPHeaders = HTTPHeaders(), body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }
}
