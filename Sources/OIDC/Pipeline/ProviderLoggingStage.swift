internal import Foundation
internal import Logging

/// The provider pipeline's innermost library stage: logs each attempt as it leaves and a transport
/// failure as it comes back (`token endpoint request`, `token endpoint unreachable`, at `debug`),
/// by the call's non-secret facts only: never the form or the headers. Userinfo logs its own lines.
struct ProviderLoggingStage: ProviderStage {
    func intercept(_ request: ProviderRequest, next: Next) async throws(OIDCError) -> HTTPResponse {
        guard !request.call.carriesAccessToken else { return try await next(request) }
        // Built only inside the log calls' autoclosures, so only for a level the handler takes.
        let logger = request.client.logger, call = request.call, url = request.url, method = request.client.authentication.method
        logger.debug("token endpoint request", metadata: Self.purpose(of: call, at: url, method: method))
        if logger.logLevel <= .debug { request.exchange.attemptStarted(at: .now) }
        do { return try await next(request) } catch {
            logger.debug("token endpoint unreachable", metadata: Self.purpose(of: call, at: url, method: method).merging(.failure(error)) { $1 })
            throw error
        }
    }

    /// What every line about a provider call carries: the endpoint, the client authentication
    /// method, and the grant type or the request's name.
    static func purpose(of call: ProviderCall, at url: URL, method: ClientAuthenticationMethod) -> Logger.Metadata {
        var purpose: Logger.Metadata = ["endpoint": .endpoint(url), "client_authentication": .string(method.rawValue)]
        if call.grantType != nil { purpose["grant_type"] = .string(call.logName) } else { purpose["request"] = .string(call.logName) }
        return purpose
    }
}
