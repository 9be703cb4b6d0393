internal import Foundation
internal import HTTPTypes
internal import OIDC
internal import OpenAPIRuntime
internal import Synchronization

/// The last hop of each attempt of a ``SessionMiddleware`` call: the request as the pipeline made it
/// (with `Authorization` and `DPoP`), handed to the OpenAPI client's next middleware or transport.
/// It keeps the answer's streaming body, and the transport's own error, for the middleware to return.
final class OpenAPIHop: HTTPTransport {
    typealias Next = @Sendable (HTTPTypes.HTTPRequest, HTTPBody?, URL) async throws -> (HTTPTypes.HTTPResponse, HTTPBody?)

    private let next: Next
    /// Whether the caller's request had a body (an empty one included): a `GET` without one is sent without.
    private let sendsBody: Bool
    private struct Kept {
        var body: HTTPBody?
        var error: (any Error)?
        var wrapped: OIDCError?
    }
    private let kept = Mutex(Kept())

    init(next: @escaping Next, sendsBody: Bool) {
        self.next = next
        self.sendsBody = sendsBody
    }

    func send(_ request: OIDC.HTTPRequest, options: HTTPRequestOptions) async throws(OIDCError) -> OIDC.HTTPResponse {
        let (outgoing, baseURL) = OpenAPIHop.split(request)
        let response: HTTPTypes.HTTPResponse, body: HTTPBody?
        do {
            (response, body) = try await next(outgoing, sendsBody || !request.body.isEmpty ? HTTPBody(request.body) : nil, baseURL)
        } catch {
            let wrapped = OIDCError(
                .networkFailure, "The OpenAPI client's transport failed: \(type(of: error)).", context: ["url": baseURL.absoluteString])
            kept.withLock { $0 = Kept(body: nil, error: error, wrapped: wrapped) }
            throw wrapped
        }
        var answer = OIDC.HTTPResponse(status: response.status.code, headers: OIDC.HTTPHeaders(response.headerFields.map { ($0.name.rawName, $0.value) }))
        if response.status.code == 401 || response.status.code == 403 {
            // The pipeline reads these (the challenge, the step-up): read, bounded, then given back as bytes.
            let read: [UInt8]?
            do {
                if let body { read = try await Self.bytes(of: body, upTo: options.maximumResponseSize) } else { read = [] }
            } catch {
                let wrapped = OIDCError(
                    .networkFailure, "The OpenAPI client's transport failed reading the answer: \(type(of: error)).", context: ["url": baseURL.absoluteString])
                kept.withLock { $0 = Kept(body: nil, error: error, wrapped: wrapped) }
                throw wrapped
            }
            guard let read else {
                throw OIDCError(
                    .responseTooLarge, "The resource's \(response.status.code) answer is larger than \(options.maximumResponseSize) bytes.",
                    context: ["url": baseURL.absoluteString])
            }
            answer.body = read
            kept.withLock { $0 = Kept() }
        } else {
            kept.withLock { $0 = Kept(body: body) }
        }
        return answer
    }

    /// The body to return with `answer`, the pipeline's last: the streaming body the transport gave,
    /// or the bytes the pipeline holds (a 401 or 403 it read, or one a stage of the user's made).
    func body(of answer: OIDC.HTTPResponse) -> HTTPBody? {
        if !answer.body.isEmpty { return HTTPBody(answer.body) }
        return kept.withLock { $0.body }
    }

    /// The transport's own error when `error` is the stand-in this hop threw for it.
    func transportError(behind error: any Error) -> (any Error)? {
        kept.withLock { kept in
            guard let wrapped = kept.wrapped, let thrown = error as? OIDCError, thrown.message == wrapped.message else { return nil }
            return kept.error
        }
    }

    /// `body`'s bytes, or `nil` when there are more than `limit`; the body's own errors as it throws them.
    static func bytes(of body: HTTPBody, upTo limit: Int) async throws -> [UInt8]? {
        var bytes: [UInt8] = []
        for try await chunk in body {
            guard bytes.count + chunk.count <= limit else { return nil }
            bytes += chunk
        }
        return bytes
    }

    /// `request` as the OpenAPI runtime hands requests on: a path (with its query) under a base URL.
    static func split(_ request: OIDC.HTTPRequest) -> (HTTPTypes.HTTPRequest, URL) {
        let components = URLComponents(url: request.url, resolvingAgainstBaseURL: false)
        var path = components?.percentEncodedPath ?? "/"
        if path.isEmpty { path = "/" }
        if let query = components?.percentEncodedQuery { path += "?" + query }
        var origin = URLComponents()
        origin.scheme = components?.scheme
        origin.percentEncodedHost = components?.percentEncodedHost
        origin.port = components?.port
        var fields = HTTPFields()
        for (name, value) in request.headers {
            if let name = HTTPField.Name(name) { fields.append(HTTPField(name: name, value: value)) }
        }
        let outgoing = HTTPTypes.HTTPRequest(method: HTTPTypes.HTTPRequest.Method(request.method) ?? .get, scheme: nil, authority: nil, path: path, headerFields: fields)
        return (outgoing, origin.url ?? request.url)
    }
}

extension OIDC.HTTPRequest {
    /// The OpenAPI client's `request` under `baseURL`, with `body`: the URL joined as the runtime's
    /// transports join it (the base URL's path, then the request's path and query).
    init(_ request: HTTPTypes.HTTPRequest, body: [UInt8], baseURL: URL) throws(OIDCError) {
        guard var joined = URLComponents(url: baseURL, resolvingAgainstBaseURL: false),
            let relative = URLComponents(string: request.path ?? "")
        else {
            throw OIDCError(.malformedURL, "The OpenAPI request's path does not join its base URL.", context: ["baseURL": baseURL.absoluteString])
        }
        let base = joined.percentEncodedPath.hasSuffix("/") ? String(joined.percentEncodedPath.dropLast()) : joined.percentEncodedPath
        joined.percentEncodedPath = base + relative.percentEncodedPath
        joined.percentEncodedQuery = relative.percentEncodedQuery
        guard let url = joined.url else {
            throw OIDCError(.malformedURL, "The OpenAPI request's path does not join its base URL.", context: ["baseURL": baseURL.absoluteString])
        }
        self.init(method: request.method.rawValue, url: url, headers: OIDC.HTTPHeaders(request.headerFields.map { ($0.name.rawName, $0.value) }), body: body)
    }
}

extension HTTPTypes.HTTPResponse {
    /// The pipeline's `answer` for the OpenAPI client (its body apart).
    init(_ answer: OIDC.HTTPResponse) throws(OIDCError) {
        var fields = HTTPFields()
        for (name, value) in answer.headers {
            if let name = HTTPField.Name(name) { fields.append(HTTPField(name: name, value: value)) }
        }
        self.init(status: HTTPTypes.HTTPResponse.Status(code: answer.status), headerFields: fields)
    }
}
