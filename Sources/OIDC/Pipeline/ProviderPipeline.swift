internal import Foundation
internal import Logging

/// The provider pipeline (every call of a ``TokenClient``): client authentication → the mutual
/// TLS check → DPoP proof → the user's stages → send, then on the way back the DPoP nonce retry
/// (which goes through client authentication and the proof again) and the answer's check, which
/// maps anything but a success to a typed error (``HTTPErrorMapping``).
struct ProviderPipeline: Sendable {
    /// The stages and the transport.
    let pipeline: HTTPPipeline
    /// Where the answer's check logs.
    let logger: Logger
    /// How the client authenticates, named in the errors of a refused client.
    let authentication: ClientAuthentication

    /// Sends `request` (a form POST without client authentication yet), the call `call`, and
    /// returns its answer: a 200, or one `passing` takes (a device poll's `authorization_pending`,
    /// say); anything else is thrown, with none of `secrets` (the form's secret values and the
    /// client secret) nor the client authentication's in its text.
    func send(
        _ request: HTTPRequest, call: ProviderCall, secrets: [String], passing: (HTTPResponse) -> Bool
    ) async throws(OIDCError) -> HTTPResponse {
        let exchange = ProviderExchange(secrets: secrets)
        let pipeline = pipeline
        let response = try await withTaskLocal(ProviderExchange.$current, exchange) { () async throws(OIDCError) -> HTTPResponse in
            try await pipeline.send(request, call: .provider(call))
        }
        let url = request.url, method = authentication.method
        guard response.status == 200 || passing(response) else {
            let error = HTTPErrorMapping.unexpectedStatus(
                response, endpoint: url, what: call.endpointName, secrets: exchange.secrets, authentication: authentication)
            logger.debug(
                "token endpoint refused the request", metadata: ProviderLoggingStage.purpose(of: call, at: url, method: method).merging(.failure(error)) { $1 })
            throw error
        }
        if let start = exchange.attemptStart {
            logger.trace(
                "token endpoint answered",
                metadata: ProviderLoggingStage.purpose(of: call, at: url, method: method).merging([
                    "status": .int(response.status), "duration_ms": .milliseconds(since: start),
                ]) { $1 })
        }
        return response
    }
}
