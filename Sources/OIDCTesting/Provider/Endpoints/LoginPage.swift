internal import OIDC

/// The demo sign-in page (``TestProvider/AuthorizeBehaviour/loginPage``): "Sign in" and "Cancel"
/// buttons in a form that POSTs to `/authorize/confirm`, which then redirects like `/authorize`.
enum LoginPage {
    static func page(requestID: String, user: TestUser, _ authorization: ValidatedAuthorization, _ context: ProviderContext) -> ProviderResponse {
        let action = HTML.escape(context.configuration.issuerPath + ProviderPaths.authorizeConfirm)
        let body = """
            <h1>Sign in</h1>
            <p><strong>\(HTML.escape(authorization.client.id))</strong> asks to sign you in\
            \(authorization.scope.isEmpty ? "" : " with the scope <code>\(HTML.escape(authorization.scope))</code>").</p>
            <p>You are the test user <strong>\(HTML.escape(user.name ?? user.subject))</strong>.</p>
            <form method="post" action="\(action)">
            <input type="hidden" name="request_id" value="\(HTML.escape(requestID))">
            <button type="submit" name="action" value="sign_in" autofocus>Sign in</button>
            <button type="submit" name="action" value="cancel">Cancel</button>
            </form>
            """
        return .html(HTML.page(title: "Sign in to the test provider", body: body))
    }

    /// The form's answer: sign in (a code) or cancel (`access_denied`). A request id is good once.
    static func confirm(_ request: ProviderRequest, _ context: ProviderContext) async -> ProviderResponse {
        guard request.method == "POST" else { return .methodNotAllowed("POST") }
        guard request.hasFormBody, let parameters = try? request.formParameters(), parameters.firstDuplicateName == nil,
            let id = parameters.nonEmpty("request_id")
        else {
            return .html(HTML.errorPage("invalid_request", "The sign-in form is incomplete."), status: 400)
        }
        guard let authorization = await context.state.takeLogin(id) else {
            return .html(HTML.errorPage("invalid_request", "This sign-in request is unknown, used or expired."), status: 400)
        }
        if parameters["action"] == "sign_in" {
            return await AuthorizeEndpoint.signIn(authorization, context)
        }
        return await AuthorizeEndpoint.errorRedirect(
            to: authorization.redirectURI, state: authorization.state,
            OAuthError(code: "access_denied", description: "The user cancelled the sign-in."), context,
            signedFor: authorization.signedResponseClient
        )
    }
}
