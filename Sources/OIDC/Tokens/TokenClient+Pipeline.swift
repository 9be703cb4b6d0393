internal import Foundation
internal import Logging

/// The provider pipeline of a token client: every call to the provider goes through it.
extension TokenClient {
    /// Builds ``providerPipeline`` again from the settings as they are now: called when one changes.
    mutating func rebuildPipeline() {
        providerPipeline = Self.pipeline(
            provider: provider, clientID: clientID, authentication: authentication, transport: transport, requestOptions: requestOptions,
            now: now, logger: logger, dpop: dpop, stages: stages + configurationStages)
    }

    /// The pipeline of these settings: the nonce retry (outermost), client authentication, the
    /// mutual TLS check, the DPoP proof and the logs of each attempt, then the user's `stages`, then
    /// the `transport`.
    static func pipeline(
        provider: ProviderConfiguration, clientID: String, authentication: ClientAuthentication, transport: any HTTPTransport,
        requestOptions: HTTPRequestOptions, now: @escaping @Sendable () -> Date, logger: Logger, dpop: DPoP?, stages: [any HTTPStage]
    ) -> ProviderPipeline {
        let method = authentication.method
        let proofs: @Sendable () -> DPoP? = { dpop }
        let library: [any HTTPStage] = [
            DPoPNonceRetryStage(proofs: proofs) { request, call in
                // Userinfo retries without a line, as a resource request would.
                guard case .provider(let providerCall) = call, !providerCall.carriesAccessToken else { return }
                // A new nonce: the code or refresh token was not spent (RFC 9449 §8); once more with it.
                logger.debug(
                    "token endpoint asked for a DPoP nonce; retrying once",
                    metadata: ProviderLoggingStage.purpose(of: providerCall, at: request.url, method: method))
            },
            ClientAuthenticationStage(authentication: authentication, clientID: clientID, issuer: provider.issuer, now: now),
            MutualTLSStage(method: method, presentsCertificate: transport.presentsClientCertificate),
            DPoPProofStage(proofs: proofs),
            ProviderLoggingStage(logger: logger, method: method),
        ]
        return ProviderPipeline(
            pipeline: HTTPPipeline(stages: library + stages, transport: transport, options: requestOptions), logger: logger,
            authentication: authentication)
    }

    /// A form POST of `form`, the call `call`, through the provider pipeline (client
    /// authentication, the provider's headers, a DPoP proof when the call carries one); anything
    /// but 200 is thrown, unless `passing` takes it (a device poll's `authorization_pending`, say).
    func post(
        _ form: [OAuthParameter], _ call: ProviderCall, to url: URL, passing: (HTTPResponse) -> Bool = { _ in false }
    ) async throws(OIDCError) -> HTTPResponse {
        var headers = HTTPHeaders()
        headers.add("Content-Type", "application/x-www-form-urlencoded")
        headers.add("Accept", "application/json")
        for header in provider.tokenRequestHeaders { headers.add(header.name, header.value) }
        let request = HTTPRequest(method: "POST", url: url, headers: headers, body: Array(FormURLEncoding.encode(form).utf8))
        let secrets = form.filter { Self.secretParameters.contains($0.name) }.map(\.value) + [clientSecret?.revealedValue].compactMap { $0 }
        return try await providerPipeline.send(request, call: call, secrets: secrets, passing: passing)
    }

    /// Form parameters whose values are secrets.
    static let secretParameters: Set<String> = [
        "code", "code_verifier", "refresh_token", "client_secret", "client_assertion", "token", "subject_token", "actor_token",
        "device_code",
    ]
}
