internal import Foundation

/// The provider pipeline's client authentication: every call but userinfo (which carries the access
/// token instead) is authenticated as ``TokenClient/authentication`` says, afresh on each attempt
/// (a client assertion is single-use: a retry gets a new one). The parameters go before the form's
/// own, a `client_secret_basic` secret in the `Authorization` header.
struct ClientAuthenticationStage: ProviderStage {
    func intercept(_ request: ProviderRequest, next: Next) async throws(OIDCError) -> HTTPResponse {
        guard !request.call.carriesAccessToken else { return try await next(request) }
        let client = request.client
        var parameters: [OAuthParameter] = []
        var request = request
        try client.authentication.authenticate(
            &parameters, headers: &request.headers, clientID: client.clientID, endpoint: request.url, issuer: client.provider.issuer,
            now: client.now())
        request.form = parameters + request.form
        request.exchange.sent(parameters.filter { ClientAuthentication.secretParameters.contains($0.name) }.map(\.value))
        if client.authentication.method == .clientSecretBasic, let basic = request.headers["Authorization"] {
            // The Basic credential, whole and as its base64 part: an echoing provider's error text must not carry it.
            request.exchange.sent([basic, String(basic.drop { $0 != " " }.dropFirst())])
        }
        return try await next(request)
    }
}
