internal import OIDC

extension AuthorizeEndpoint {
    /// The parameters `/authorize` works with: a pushed request's (RFC 9126, by its `request_uri`,
    /// once, for the client that pushed it), a request object's (RFC 9101, `request`), or the
    /// query's when neither is required; else the error page to show.
    static func resolveParameters(_ given: [OAuthParameter], _ context: ProviderContext) async -> Result<[OAuthParameter], AuthorizeEndpoint.Refusal> {
        let mode = context.configuration.pushedAuthorizationRequests
        if given["request_uri"] != nil, given["request"] != nil {
            return .failure(.page("invalid_request", "A request cannot carry both request and request_uri (RFC 9101 §5)."))
        }
        guard let uri = given["request_uri"] else {
            if mode == .required {
                return .failure(.page("invalid_request", "This provider takes pushed authorization requests only (RFC 9126): push the request to /par first."))
            }
            guard let object = given["request"] else {
                if context.configuration.signedRequestObjects == .required {
                    return .failure(.page("invalid_request_object", "This provider takes only signed request objects (RFC 9101)."))
                }
                return .success(given)
            }
            guard !given.isRepeated("request"), !given.isRepeated("client_id"), let clientID = given.nonEmpty("client_id") else {
                return .failure(.page("invalid_request", "A request with a request object needs exactly one client_id and one request."))
            }
            do { return .success(try await RequestObjectCheck.parameters(object, clientID: clientID, context)) } catch {
                return .failure(.page(error.code, error.description ?? "The request object was refused."))
            }
        }
        guard mode != .notOffered else {
            return .failure(.page("request_uri_not_supported", "This provider does not take request_uri."))
        }
        guard !given.isRepeated("request_uri"), !given.isRepeated("client_id"), let clientID = given.nonEmpty("client_id") else {
            return .failure(.page("invalid_request", "A request with request_uri needs exactly one client_id and one request_uri."))
        }
        guard let parameters = await context.state.takePushedRequest(uri, clientID: clientID) else {
            return .failure(.page("invalid_request_uri", "The request_uri is unknown, used, expired or another client's."))
        }
        return .success(parameters)
    }
}
