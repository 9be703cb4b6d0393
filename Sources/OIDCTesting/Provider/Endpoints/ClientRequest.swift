internal import OIDC

/// A POST to an endpoint where the client authenticates as at the token endpoint (revocation,
/// introspection, device authorization): its form, once checked, and the client it came from.
struct ClientRequest {
    let client: TestProvider.Client
    let parameters: [OAuthParameter]

    /// The answer that refuses a request.
    struct Refusal: Error {
        let response: ProviderResponse
    }

    /// The form and the client of `request`, or the answer that refuses it: 405 for another method,
    /// `invalid_request` for a body that is not a form or repeats a parameter, the client
    /// authentication's own error.
    ///
    /// - Parameter what: the request's name for the message ("The introspection request").
    static func read(_ request: ProviderRequest, _ context: ProviderContext, what: String) async -> Result<ClientRequest, Refusal> {
        guard request.method == "POST" else { return .failure(Refusal(response: .methodNotAllowed("POST"))) }
        guard request.hasFormBody, let parameters = try? request.formParameters() else {
            return .failure(Refusal(response: .oauthError(.invalidRequest("\(what) must be application/x-www-form-urlencoded."))))
        }
        if let name = parameters.firstDuplicateName {
            return .failure(Refusal(response: .oauthError(.invalidRequest("The parameter '\(name)' appears more than once."))))
        }
        do {
            return .success(ClientRequest(client: try await ClientAuthenticator.authenticate(request, parameters, context), parameters: parameters))
        } catch {
            return .failure(Refusal(response: .oauthError(error)))
        }
    }
}
