internal import Foundation

/// The provider pipeline's client authentication: every call but userinfo (which carries the access
/// token instead) is authenticated as ``TokenClient/authentication`` says, afresh on each attempt
/// (a client assertion is single-use: a retry gets a new one). The parameters go before the form's
/// own, a `client_secret_basic` secret in the `Authorization` header.
struct ClientAuthenticationStage: HTTPStage {
    let authentication: ClientAuthentication
    let clientID: String
    let issuer: String
    let now: @Sendable () -> Date

    func intercept(_ request: HTTPRequest, call: HTTPCall, next: Next) async throws(OIDCError) -> HTTPResponse {
        guard !call.carriesAccessToken else { return try await next(request) }
        var parameters: [OAuthParameter] = []
        var request = request
        try authentication.authenticate(&parameters, headers: &request.headers, clientID: clientID, endpoint: request.url, issuer: issuer, now: now())
        if !parameters.isEmpty {
            let added = Array(FormURLEncoding.encode(parameters).utf8)
            request.body = request.body.isEmpty ? added : added + Array("&".utf8) + request.body
        }
        ProviderExchange.current?.sent(
            parameters.filter { ClientAuthentication.secretParameters.contains($0.name) }.map(\.value))
        return try await next(request)
    }
}
