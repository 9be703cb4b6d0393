public import Foundation

/// A request to the provider before it is encoded: which call it is, where it goes, its form
/// parameters and its headers. The provider pipeline's OAuth stages (the resource indicator, the
/// DPoP nonce retry, client authentication, the proof) and yours (``ProviderStage``) change it as a
/// value; it becomes HTTP bytes last, just before the per-attempt ``HTTPStage``s and the transport.
public struct ProviderRequest: Sendable {
    /// Which call: a grant, a pushed authorization request, a revocation, ….
    public let call: ProviderCall
    /// `POST` for every call but userinfo (`GET`). A stage cannot change it.
    public internal(set) var method: String
    /// The endpoint, chosen and checked by the library (https, or loopback http; the mutual-TLS
    /// alias when the client uses mutual TLS). A stage cannot send the request elsewhere.
    public internal(set) var url: URL
    /// The form parameters, in order; client authentication adds its own before them.
    public var form: [OAuthParameter]
    /// The headers: the provider's extra ones (Schibsted's `X-OIDC`), `Accept`, `Content-Type`.
    public var headers: HTTPHeaders
    /// The settings of the client making the call: its authentication, DPoP, resource, stages.
    package let client: TokenClient
    /// What the call's stages learn that its answer's check needs: the secrets sent.
    package let exchange: ProviderExchange
    /// The access token of a call that carries one (userinfo).
    package let accessToken: Secret?
    /// The call as its ``CallStage``s see it.
    package let logical: LogicalCall

    package init(
        call: ProviderCall, method: String = "POST", url: URL, form: [OAuthParameter], headers: HTTPHeaders, client: TokenClient,
        secrets: [String], accessToken: Secret? = nil
    ) {
        self.call = call
        self.method = method
        self.url = url
        self.form = form
        self.headers = headers
        self.client = client
        self.exchange = ProviderExchange(secrets: secrets)
        self.accessToken = accessToken
        self.logical = LogicalCall(call: .provider(call), method: method, url: url)
    }

    /// The HTTP request: the form encoded as `application/x-www-form-urlencoded` (a `GET` carries none).
    var encoded: HTTPRequest {
        HTTPRequest(method: method, url: url, headers: headers, body: method == "GET" ? [] : Array(FormURLEncoding.encode(form).utf8))
    }

    /// Whether the form has a parameter `name`.
    func has(_ name: String) -> Bool { form.contains { $0.name == name } }
}

/// A stage of the provider pipeline at the OAuth level: it sees each call's ``ProviderRequest`` as
/// a value (its form parameters, not bytes), hands it on with `next`, and sees the answer. A
/// feature that adds or checks a parameter is one such stage: the library's resource indicator
/// (RFC 8707) is one, and so is a stage of yours that puts a parameter on every token request
/// (``RelyingParty/Configuration/providerRequestStages``).
///
/// Yours run after the library's parameter stages (the `resource`), and before the DPoP nonce retry,
/// client authentication and the proof: once per call (twice when the library tries a refresh again
/// without its `resource`, after an `invalid_target`), never seeing the client's secret or
/// assertion. A parameter you add is sent as it is: neither a client assertion nor a DPoP proof
/// signs the form. A stage may change the form and the headers, not the endpoint or the method. A
/// form parameter that holds a secret (a `subject_token`, an `assertion`) is kept out of the
/// library's errors and logs by its name, as the library's own are.
///
/// ```swift
/// struct Audience: ProviderStage {
///     func intercept(_ request: ProviderRequest, next: ProviderStage.Next) async throws(OIDCError) -> HTTPResponse {
///         var request = request
///         if request.call.grantType != nil { request.form.append(OAuthParameter("audience", "https://api.example.com")) }
///         return try await next(request)
///     }
/// }
/// ```
public protocol ProviderStage: Sendable {
    /// The rest of the provider pipeline after this stage.
    typealias Next = @Sendable (ProviderRequest) async throws(OIDCError) -> HTTPResponse

    /// Handles `request`: usually changes it, hands it to `next`, and returns (or changes) the answer.
    func intercept(_ request: ProviderRequest, next: Next) async throws(OIDCError) -> HTTPResponse
}

extension ArraySlice where Element == any ProviderStage {
    /// `request` through these stages in order, then `last`.
    func run(_ request: ProviderRequest, then last: @escaping ProviderStage.Next) async throws(OIDCError) -> HTTPResponse {
        try await OIDC.run(self, request, intercept: { stage, request, next async throws(OIDCError) in
            try await stage.intercept(request, next: next)
        }, then: last)
    }
}
