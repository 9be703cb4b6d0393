internal import Foundation
internal import Logging
internal import Synchronization

/// The provider pipeline (every call of a ``TokenClient``), made once: the user's call stages, then
/// at the OAuth level the resource indicator, the user's request stages, the DPoP nonce retry (which
/// goes through the stages after it again), client authentication, the mutual TLS check, the
/// credential (the access token of userinfo, the DPoP proof) and the attempt's log; then the
/// request is encoded and goes through the user's per-attempt stages to the transport. On the way
/// back, the answer's check maps anything but a success to a typed error (``HTTPErrorMapping``).
/// The stages are constants: what they need of the client comes with each request.
enum ProviderPipeline {
    /// The library's parameter stages, before the user's request stages.
    static let parameterStages: [any ProviderStage] = [ResourceIndicatorStage()]
    /// The library's stages of each attempt, after the user's request stages.
    static let attemptStages: [any ProviderStage] = [
        ProviderNonceRetryStage(), ClientAuthenticationStage(), MutualTLSStage(), ProviderCredentialStage(), ProviderLoggingStage(),
    ]

    /// Sends `request` and returns what `read` makes of its answer: a 200, or one `passing` takes (a
    /// device poll's `authorization_pending`, say); anything else is thrown, with none of the secrets
    /// the request carried (the form's, the client authentication's, the proof) in its text. `read`
    /// runs inside the call stages, so that they see the outcome the caller gets: a 200 whose body is
    /// refused (a downgrade to `Bearer`, an unreadable token response) is an error to them too.
    static func send<Answer: Sendable>(
        _ request: ProviderRequest, passing: @escaping @Sendable (HTTPResponse) -> Bool,
        read: @escaping @Sendable (HTTPResponse) throws(OIDCError) -> Answer
    ) async throws(OIDCError) -> Answer {
        let answer = Mutex<Answer?>(nil)
        let response = try await request.client.callStages.run(request.logical) { () async throws(OIDCError) -> HTTPResponse in
            let response = try await checkedAttempts(request, passing: passing)
            let read = try read(response)
            answer.withLock { $0 = read }
            return response
        }
        if let read = answer.withLock({ $0 }) { return read }
        // A call stage answered without the library's attempts (a cache of its own): its answer, read.
        return try read(try checked(response, of: request, passing: passing))
    }

    /// The OAuth-level stages, the attempts and the answer's check of `request`.
    private static func checkedAttempts(
        _ request: ProviderRequest, passing: @escaping @Sendable (HTTPResponse) -> Bool
    ) async throws(OIDCError) -> HTTPResponse {
        let client = request.client
        let response = try await parameterStages[...].run(request) { (request: ProviderRequest) async throws(OIDCError) -> HTTPResponse in
            try await client.requestStages[...].run(request) { (request: ProviderRequest) async throws(OIDCError) -> HTTPResponse in
                try await attemptStages[...].run(request, then: encodedAttempt)
            }
        }
        return try checked(response, of: request, passing: passing)
    }

    /// The last step at the OAuth level: the request as bytes, through the user's per-attempt
    /// stages (``TokenClient/stages``, then the configuration's) to the transport.
    private static func encodedAttempt(_ request: ProviderRequest) async throws(OIDCError) -> HTTPResponse {
        let client = request.client, call = HTTPCall.provider(request.call)
        // Every secret the form carries as it leaves, whoever put it there (a user's stage too).
        request.exchange.sent(request.form.filter { TokenClient.secretParameters.contains($0.name) }.map(\.value))
        request.logical.attemptLeaves()
        return try await client.stages[...].run(request.encoded, call: call) { (encoded: HTTPRequest) async throws(OIDCError) -> HTTPResponse in
            try await client.configurationStages[...].run(encoded, call: call) { (encoded: HTTPRequest) async throws(OIDCError) -> HTTPResponse in
                try await client.transport.send(encoded, options: client.requestOptions)
            }
        }
    }

    /// `response`, if it is a 200 or `passing` takes it; otherwise its typed error, logged.
    private static func checked(
        _ response: HTTPResponse, of request: ProviderRequest, passing: (HTTPResponse) -> Bool
    ) throws(OIDCError) -> HTTPResponse {
        let logger = request.client.logger, url = request.url, call = request.call, authentication = request.client.authentication
        guard response.status == 200 || passing(response) else {
            let error = HTTPErrorMapping.unexpectedStatus(
                response, endpoint: url, what: call.endpointName, secrets: request.exchange.secrets, authentication: authentication)
            logger.debug(
                "token endpoint refused the request",
                metadata: ProviderLoggingStage.purpose(of: call, at: url, method: authentication.method).merging(.failure(error)) { $1 })
            throw error
        }
        if let start = request.exchange.attemptStart {
            logger.trace(
                "token endpoint answered",
                metadata: ProviderLoggingStage.purpose(of: call, at: url, method: authentication.method).merging([
                    "status": .int(response.status), "duration_ms": .milliseconds(since: start),
                ]) { $1 })
        }
        return response
    }
}
