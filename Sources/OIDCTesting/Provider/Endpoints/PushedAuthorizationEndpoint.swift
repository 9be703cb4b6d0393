internal import Foundation
internal import OIDC

/// RFC 9126: `/par` takes an authorization request's parameters from an authenticated client and
/// answers `201` with a single-use `request_uri`; `/authorize` then resolves it
/// (`AuthorizeEndpoint.resolveParameters`), and takes nothing else when pushed requests are required.
///
/// A DPoP proof sent with the push binds the code to its key, as `dpop_jkt` does (RFC 9449 §10.1);
/// both together must name the same key. The proof is checked first, so a nonce challenge spends
/// no client assertion.
enum PushedAuthorizationEndpoint {
    static let requestURIPrefix = "urn:ietf:params:oauth:request_uri:"

    static func handle(_ request: ProviderRequest, _ context: ProviderContext) async -> ProviderResponse {
        guard context.configuration.pushedAuthorizationRequests != .notOffered else { return .notFound }
        var proof: DPoPProofCheck.Accepted?
        if context.configuration.dpop.support != .notOffered {
            do { proof = try await DPoPProofCheck.check(request, endpoint: .pushedAuthorization, context) } catch {
                return error.tokenEndpointResponse
            }
        }
        var response = await push(request, boundTo: proof?.thumbprint, context)
        response.headers += proof?.headers ?? []
        return response
    }

    private static func push(_ request: ProviderRequest, boundTo jkt: String?, _ context: ProviderContext) async -> ProviderResponse {
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
        if let jkt {
            if let sent = parameters["dpop_jkt"], sent != jkt {
                return .oauthError(.invalidDPoPProof("dpop_jkt is not the thumbprint of the DPoP proof's key (RFC 9449 §10.1)."))
            }
            if parameters["dpop_jkt"] == nil { parameters.append(OAuthParameter("dpop_jkt", jkt)) }
        }
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
