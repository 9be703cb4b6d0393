internal import Foundation
internal import Logging

/// The requests of a token client: every call to the provider goes through the provider pipeline.
extension TokenClient {
    /// A form POST of `form`, the call `call`, through the provider pipeline (client
    /// authentication, the provider's headers, a DPoP proof when the call carries one); anything
    /// but 200 is thrown, unless `passing` takes it (a device poll's `authorization_pending`, say).
    func post(
        _ form: [OAuthParameter], _ call: ProviderCall, to url: URL, passing: @escaping @Sendable (HTTPResponse) -> Bool = { _ in false }
    ) async throws(OIDCError) -> HTTPResponse {
        try await post(form, call, to: url, passing: passing) { (response: HTTPResponse) throws(OIDCError) -> HTTPResponse in response }
    }

    /// ``post(_:_:to:passing:)``, its answer read by `read` inside the call stages (a token
    /// response, say), so that they see the outcome the caller gets.
    func post<Answer: Sendable>(
        _ form: [OAuthParameter], _ call: ProviderCall, to url: URL, passing: @escaping @Sendable (HTTPResponse) -> Bool = { _ in false },
        read: @escaping @Sendable (HTTPResponse) throws(OIDCError) -> Answer
    ) async throws(OIDCError) -> Answer {
        var headers = HTTPHeaders()
        headers.add("Content-Type", "application/x-www-form-urlencoded")
        headers.add("Accept", "application/json")
        for header in provider.tokenRequestHeaders { headers.add(header.name, header.value) }
        let request = ProviderRequest(call: call, url: url, form: form, headers: headers, client: self, secrets: [authentication.secret?.revealedValue].compactMap { $0 })
        return try await ProviderPipeline.send(request, passing: passing, read: read)
    }

    /// Form parameters whose values are secrets.
    static let secretParameters: Set<String> = [
        "code", "code_verifier", "refresh_token", "client_secret", "client_assertion", "token", "subject_token", "actor_token",
        "device_code", "assertion", "auth_req_id", "client_notification_token",
        // A signed request (a CIBA authentication request, a pushed request object) carries the others inside.
        "request",
    ]
}
