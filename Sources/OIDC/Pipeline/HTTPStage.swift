internal import Foundation

/// One step of a request pipeline: it sees each request on its way out, hands it on with `next`,
/// and sees the answer on its way back (the shape of swift-openapi-runtime's
/// `ClientMiddleware.intercept(_:next:)`).
///
/// There are two pipelines (<doc:Pipelines>): the provider's, of a ``TokenClient`` (every call to
/// the token, pushed authorization, revocation, introspection, device authorization and userinfo
/// endpoints, each a ``ProviderCall``), and the resources', of an ``AuthenticatedSession`` (every
/// ``AuthenticatedSession/send(_:)``). The library's own features (client authentication, the mutual
/// TLS check, DPoP proofs and nonce retries, the access token's header, the refresh on a 401) are
/// stages of these pipelines; a stage of yours (tracing, metrics, a header; ``TokenClient/stages``,
/// ``AuthenticatedSession/Options/stages``) runs after them, just before the transport, so it sees
/// each request as it leaves, with every header the library adds, and each answer as it comes back,
/// before the library's retries and error mapping.
///
/// A stage may change the request, call `next` more than once (a retry) or not at all (an answer
/// of its own), and change or replace the answer. It must never log a secret: the request carries
/// credentials (an `Authorization` header, a client assertion, a code, a refresh token).
///
/// ```swift
/// struct Tagging: HTTPStage {
///     func intercept(
///         _ request: HTTPRequest, call: HTTPCall, next: HTTPStage.Next
///     ) async throws(OIDCError) -> HTTPResponse {
///         var request = request
///         request.headers.set("X-Request-ID", UUID().uuidString)
///         return try await next(request)
///     }
/// }
/// ```
public protocol HTTPStage: Sendable {
    /// The rest of the pipeline after this stage, ending in the transport.
    typealias Next = @Sendable (HTTPRequest) async throws(OIDCError) -> HTTPResponse

    /// Handles `request`, the call `call` of a pipeline: usually changes it, hands it to `next`,
    /// and returns (or changes) the answer.
    func intercept(_ request: HTTPRequest, call: HTTPCall, next: Next) async throws(OIDCError) -> HTTPResponse
}
