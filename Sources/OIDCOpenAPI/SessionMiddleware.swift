public import Foundation
public import HTTPTypes
public import OIDC
public import OpenAPIRuntime

/// An OpenAPI-generated client's middleware that sends every operation through an
/// `AuthenticatedSession`'s resource pipeline: the access token (bearer, or DPoP with a fresh proof
/// for each request of a DPoP-bound login), one retry with the server's DPoP nonce, the refresh
/// before the token expires and once on a 401 (with one retry), the 403 `insufficient_scope`
/// step-up error, the host allowlist, and the session's stages, as `AuthenticatedSession.send(_:)`
/// gives them. The request leaves through the client's own transport (`next`).
///
/// ```swift
/// let client = Client(serverURL: api, transport: AsyncHTTPClientTransport(),
///                     middlewares: [SessionMiddleware(session: session)])
/// ```
///
/// - A request body is read into memory first (at most ``maximumRequestBodySize`` bytes), since a
///   retry sends it again; a larger one is refused with `invalidArgument` before anything is sent.
/// - The answer's body streams through untouched, except for a 401 or 403, which the pipeline reads
///   (at most the session's `maximumResponseSize`).
/// - The URL is the base URL's path (without a trailing `/`) followed by the operation's path and
///   query; the middlewares and the transport after this one get it back as an origin-only base URL
///   and the whole path. A stage of the session's that rewrites the URL is checked against the
///   allowlist again, but the DPoP proof was made for the URL before it.
/// - What the session throws (`OIDCError`: `hostNotAllowed`, `notLoggedIn`, `unauthorized` after the
///   refresh, `insufficientScope` with the scopes to ask for) reaches the caller as the generated
///   client's `ClientError`, whose `underlyingError` it is; an error of the transport is passed on as
///   the transport threw it.
public struct SessionMiddleware: ClientMiddleware {
    /// The session whose login authorizes the requests.
    public let session: AuthenticatedSession
    /// The largest request body sent, in bytes (4 MiB unless set).
    public let maximumRequestBodySize: Int

    /// A middleware that authorizes every request with `session`'s login.
    public init(session: AuthenticatedSession, maximumRequestBodySize: Int = 4 << 20) {
        self.session = session
        self.maximumRequestBodySize = maximumRequestBodySize
    }

    /// Sends `request` (its `body` read into memory first) through the session's resource pipeline,
    /// each attempt through `next`; returns the last attempt's answer, its body streaming.
    ///
    /// - Throws: the session's `OIDCError`s (as `AuthenticatedSession.send(_:)`), `invalidArgument`
    ///   for a body over ``maximumRequestBodySize``; `next`'s own errors as it threw them.
    public func intercept(
        _ request: HTTPTypes.HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String,
        next: @Sendable (HTTPTypes.HTTPRequest, HTTPBody?, URL) async throws -> (HTTPTypes.HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPTypes.HTTPResponse, HTTPBody?) {
        let bytes = try await Self.collect(body, upTo: maximumRequestBodySize)
        let outgoing = try OIDC.HTTPRequest(request, body: bytes, baseURL: baseURL)
        // `next` is not escaping; the pipeline's transport is only called while this call awaits it.
        return try await withoutActuallyEscaping(next) { next in
            let hop = OpenAPIHop(next: next, sendsBody: body != nil)
            do {
                let answer = try await session.send(outgoing, through: hop)
                return (try HTTPTypes.HTTPResponse(answer), hop.body(of: answer))
            } catch {
                throw hop.transportError(behind: error) ?? error
            }
        }
    }

    /// `body`'s bytes, refusing more than `limit`; the body's own errors as it throws them.
    static func collect(_ body: HTTPBody?, upTo limit: Int) async throws -> [UInt8] {
        guard let body else { return [] }
        if case .known(let length) = body.length, length > limit { throw tooLarge(limit) }
        guard let bytes = try await OpenAPIHop.bytes(of: body, upTo: limit) else { throw tooLarge(limit) }
        return bytes
    }

    private static func tooLarge(_ limit: Int) -> OIDCError {
        OIDCError(
            .invalidArgument,
            "The request body is larger than the \(limit) bytes SessionMiddleware reads into memory to send again on a retry: raise maximumRequestBodySize or send the body another way.",
            context: ["limit": String(limit)])
    }
}
