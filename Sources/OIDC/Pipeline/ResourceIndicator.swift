internal import Foundation
internal import Logging

/// Resource indicators (RFC 8707), in one place: the ``TokenClient/resource`` goes on every token
/// request but a token exchange (which names its own targets), on the device authorization request,
/// and on the authorization request; a refresh the provider refuses for it (`invalid_target`, as
/// Microsoft Entra does) gets one more try without it, logged. A `resource` the caller put in the
/// form stays as it is.
struct ResourceIndicatorStage: ProviderStage {
    func intercept(_ request: ProviderRequest, next: Next) async throws(OIDCError) -> HTTPResponse {
        guard let resource = request.client.resource, Self.carriesResource(request.call), !request.has("resource") else {
            return try await next(request)
        }
        var indicated = request
        indicated.form.append(OAuthParameter("resource", resource))
        let response = try await next(indicated)
        guard request.call == .grant(.refreshToken), Self.refusesTarget(response) else { return response }
        request.client.logger.warning("the provider refused resource on a refresh (invalid_target); trying once without it")
        return try await next(request)
    }

    /// Whether `call` carries the client's resource: a grant but a token exchange, or a device authorization.
    static func carriesResource(_ call: ProviderCall) -> Bool {
        call.grantType.map { $0 != .tokenExchange } ?? (call == .deviceAuthorization)
    }

    /// Whether `response` refuses the request's target: an OAuth error `invalid_target` (RFC 8707 §2).
    private static func refusesTarget(_ response: HTTPResponse) -> Bool {
        guard (400..<500).contains(response.status), let object = try? StrictJSONParser.parseObject(response.body) else { return false }
        return object["error"]?.stringValue == "invalid_target"
    }
}

extension TokenClient {
    /// The authorization request's `resource` (RFC 8707 §2.1): the client's ``resource``, if any.
    var resourceIndicatorParameters: [OAuthParameter] { resource.map { [OAuthParameter("resource", $0)] } ?? [] }

    /// This client for a login that was made for `resource` (RFC 8707): its refreshes carry it.
    /// A login made without one leaves the client's own.
    func indicating(_ resource: String?) -> TokenClient {
        guard let resource else { return self }
        var client = self
        client.resource = resource
        return client
    }
}
