internal import OIDC

/// RFC 8628: `/device_authorization` (the client asks for codes, authenticated as at the token
/// endpoint; a public client sends its `client_id`) and `/device`, the verification page where
/// the user enters the code (prefilled from `verification_uri_complete`) and approves or refuses.
enum DeviceEndpoints {
    static func authorize(_ request: ProviderRequest, _ context: ProviderContext) async -> ProviderResponse {
        let checked: ClientRequest
        switch await ClientRequest.read(request, context, what: "The device authorization request") {
        case .success(let read): checked = read
        case .failure(let refusal): return refusal.response
        }
        let parameters = checked.parameters
        do throws(OAuthError) {
            try RegisteredGrants.check(checked.client, uses: RegisteredGrants.deviceCode)
            var challenge: String?
            if let given = parameters.nonEmpty("code_challenge") {
                guard parameters["code_challenge_method"] == "S256" else { throw .invalidRequest("Only S256 is supported.") }
                challenge = given
            }
            return try await context.state.authorizeDevice(client: checked.client, scope: parameters.nonEmpty("scope") ?? "", codeChallenge: challenge)
        } catch {
            return .oauthError(error)
        }
    }

    static func verification(_ request: ProviderRequest, _ context: ProviderContext) async -> ProviderResponse {
        let action = HTML.escape(context.configuration.issuerPath + ProviderPaths.deviceVerification)
        switch request.method {
        case "GET":
            let code = (try? request.queryParameters())?.nonEmpty("user_code") ?? ""
            let body = """
                <h1>Sign in on another device</h1>
                <p>Enter the code your device shows. You are the test user <strong>\(HTML.escape(await context.state.user.subject))</strong>.</p>
                <form method="post" action="\(action)">
                <input type="text" name="user_code" value="\(HTML.escape(code))" autocomplete="off">
                <button type="submit" name="action" value="approve" autofocus>Approve</button>
                <button type="submit" name="action" value="deny">Deny</button>
                </form>
                """
            return .html(HTML.page(title: "Device sign-in at the test provider", body: body))
        case "POST":
            guard request.hasFormBody, let parameters = try? request.formParameters(), parameters.firstDuplicateName == nil,
                let code = parameters.nonEmpty("user_code")
            else { return .html(HTML.errorPage("invalid_request", "The code is missing."), status: 400) }
            let approve = parameters["action"] == "approve"
            guard await context.state.decideDevice(userCode: code.uppercased(), approve: approve) else {
                return .html(HTML.errorPage("invalid_request", "This code is unknown, used or expired."), status: 400)
            }
            return .html(HTML.page(title: approve ? "Device approved" : "Device refused", body: approve
                ? "<h1>Done</h1><p>Your device is signing you in. You can close this page.</p>"
                : "<h1>Refused</h1><p>The device was not signed in.</p>"))
        default:
            return .methodNotAllowed("GET, POST")
        }
    }
}
