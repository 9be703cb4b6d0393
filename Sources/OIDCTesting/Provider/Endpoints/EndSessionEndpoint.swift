internal import OIDC

/// `/logout` (OIDC RP-Initiated Logout 1.0): `id_token_hint`, `client_id`, `post_logout_redirect_uri`,
/// `state`. A registered post-logout URI gets a redirect with `state`; without one, a small page.
/// An unregistered URI, or an `id_token_hint` this provider did not issue, gets a 400 page.
enum EndSessionEndpoint {
    static func handle(_ request: ProviderRequest, _ context: ProviderContext) async -> ProviderResponse {
        let parameters: [OAuthParameter]
        do {
            switch request.method {
            case "GET": parameters = try request.queryParameters()
            case "POST" where request.hasFormBody: parameters = try request.formParameters()
            case "POST": return .html(HTML.errorPage("invalid_request", "A POSTed logout request must be a form."), status: 400)
            default: return .methodNotAllowed("GET, POST")
            }
        } catch {
            return .html(HTML.errorPage("invalid_request", "The request has a broken percent-encoding."), status: 400)
        }
        if let name = parameters.firstDuplicateName {
            return .html(HTML.errorPage("invalid_request", "The parameter '\(name)' appears more than once."), status: 400)
        }
        var clientID = parameters.nonEmpty("client_id")
        if let hint = parameters.nonEmpty("id_token_hint") {
            guard let hinted = await context.state.clientOfIDToken(hint) else {
                return .html(HTML.errorPage("invalid_request", "id_token_hint was not issued by this provider."), status: 400)
            }
            if let clientID, clientID != hinted {
                return .html(HTML.errorPage("invalid_request", "client_id differs from the audience of id_token_hint."), status: 400)
            }
            clientID = hinted
        }
        guard let redirectURI = parameters.nonEmpty("post_logout_redirect_uri") else {
            return .html(HTML.page(title: "Signed out", body: "<h1>You are signed out.</h1>"))
        }
        guard let clientID, let client = context.client(clientID),
            RedirectURIMatching.matches(registered: client.postLogoutRedirectURIs, presented: redirectURI)
        else {
            return .html(
                HTML.errorPage("invalid_request", "post_logout_redirect_uri is not registered for the client."), status: 400
            )
        }
        var query: [OAuthParameter] = []
        if let state = parameters.nonEmpty("state") { query.append(OAuthParameter("state", state)) }
        return .redirect(to: redirectURI, adding: query)
    }
}
