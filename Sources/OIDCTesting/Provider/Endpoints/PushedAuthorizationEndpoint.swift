internal import Foundation
internal import OIDC

/// RFC 9126: `/par` takes an authorization request's parameters from an authenticated client and
/// answers `201` with a single-use `request_uri`; `/authorize` then resolves it
/// (``resolve(_:_:)``), and takes nothing else when pushed requests are required.
enum PushedAuthorizationEndpoint {
    static let requestURIPrefix = "urn:ietf:params:oauth:request_uri:"

    static func handle(_ request: ProviderRequest, _ context: ProviderContext) async -> ProviderResponse {
        guard context.configuration.pushedAuthorizationRequests != .notOffered else { return .notFound }
        let checked: ClientRequest
        switch await ClientRequest.read(request, context, what: "The pushed authorization request") {
        case .success(let read): checked = read
        case .failure(let refusal): return refusal.response
        }
        var parameters = checked.parameters.filter { !["client_secret", "client_assertion", "client_assertion_type"].contains($0.name) }
        if parameters.contains(where: { $0.name == "request_uri" }) {
            return .oauthError(.invalidRequest("A pushed authorization request cannot carry request_uri (RFC 9126 §2.1)."))
        }
        if let object = parameters["request"] {
            // RFC 9126 §3: the request object carries every parameter; nothing else counts.
            do { parameters = try await RequestObjectCheck.parameters(object, clientID: checked.client.id, context) } catch { return .oauthError(error) }
        } else if context.configuration.signedRequestObjects == .required {
            return .oauthError(RequestObjectCheck.invalid("This provider takes only signed request objects (RFC 9101): push one as 'request'."))
        }
        // client_id, when sent, must be the authenticated client's (RFC 9126 §2.1).
        if let sent = parameters["client_id"], sent != checked.client.id {
            return .oauthError(.invalidRequest("client_id is not the client that authenticated."))
        }
        parameters.removeAll { $0.name == "client_id" }
        parameters.insert(OAuthParameter("client_id", checked.client.id), at: 0)
        // The checks /authorize makes, answered as an error response instead of a page or redirect.
        switch AuthorizeEndpoint.validate(parameters, context) {
        case .success:
            break
        case .failure(.page(let error, let description)):
            return .oauthError(OAuthError(code: error, description: description))
        case .failure(.redirect(_, _, let error)):
            return .oauthError(error)
        }
        do {
            let uri = try await context.state.pushRequest(clientID: checked.client.id, parameters: parameters)
            return .json(["request_uri": uri, "expires_in": context.configuration.pushedRequestLifetime], status: 201, noStore: true)
        } catch {
            return .oauthError(error)
        }
    }

    /// The parameters `/authorize` works with: a pushed request's (by its `request_uri`, once, for
    /// the client that pushed it), or the query's when pushed requests are not required; else the
    /// error page to show.
    static func resolve(_ given: [OAuthParameter], _ context: ProviderContext) async -> Result<[OAuthParameter], AuthorizeEndpoint.Refusal> {
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

extension ProviderState {
    /// Keeps `parameters` under a new `request_uri` for the configured lifetime.
    func pushRequest(clientID: String, parameters: [OAuthParameter]) throws(OAuthError) -> String {
        let uri = PushedAuthorizationEndpoint.requestURIPrefix + (try Self.randomToken())
        pushedRequests = pushedRequests.filter { $0.value.expiresAt > now }
        pushedRequests[uri] = (clientID, parameters, now.addingTimeInterval(TimeInterval(configuration.pushedRequestLifetime)))
        return uri
    }

    /// The pushed request's parameters, once, for the client that pushed it and before it expires.
    func takePushedRequest(_ uri: String, clientID: String) -> [OAuthParameter]? {
        guard let entry = pushedRequests[uri], entry.clientID == clientID else { return nil }
        pushedRequests[uri] = nil
        return entry.expiresAt > now ? entry.parameters : nil
    }
}
