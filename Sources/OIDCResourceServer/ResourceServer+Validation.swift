internal import Foundation
internal import OIDC

extension ResourceServer {
    /// Refuses configurations that cannot be right, before any request is judged by them.
    static func validate(_ configuration: Configuration) throws(OIDCError) {
        func invalid(_ message: String) -> OIDCError { OIDCError(.invalidArgument, message) }
        let resource = configuration.resource
        guard let scheme = resource.scheme?.lowercased(), let host = resource.host(percentEncoded: true), !host.isEmpty else {
            throw invalid("The resource identifier must be an absolute URL.")
        }
        guard scheme == "https" || (scheme == "http" && EndpointURLPolicy.isLoopback(host: host)) else {
            throw invalid("The resource identifier must be an https URL (or http on loopback).")
        }
        guard resource.query(percentEncoded: true) == nil, resource.fragment(percentEncoded: true) == nil else {
            throw invalid("The resource identifier must have no query and no fragment (RFC 9728 §1.2).")
        }
        if let publicOrigin = configuration.publicOrigin, case .failure(let why) = AddressedURL.origin(publicOrigin) {
            throw invalid("The public origin \(why.why) (such as https://api.example).")
        }
        guard !configuration.issuers.isEmpty || configuration.introspection != nil else {
            throw invalid("A resource server needs at least one trusted issuer or introspection.")
        }
        guard Set(configuration.issuers.map(\.issuer)).count == configuration.issuers.count else {
            throw invalid("An issuer is listed twice among the trusted issuers.")
        }
        guard !configuration.audiences.isEmpty else { throw invalid("A resource server needs at least one accepted audience.") }
        guard !configuration.algorithms.isEmpty, !configuration.algorithms.contains(where: \.isHMACAlgorithm) else {
            throw invalid("Access tokens must be accepted with asymmetric algorithms only (RFC 9068 §4): no HMAC, and at least one.")
        }
        guard configuration.dpop.mode == .off || (!configuration.dpop.algorithms.isEmpty && !configuration.dpop.algorithms.contains(where: \.isHMACAlgorithm)) else {
            throw invalid("DPoP proofs must be accepted with asymmetric algorithms only (RFC 9449 §4.2): no HMAC, and at least one.")
        }
        guard configuration.leeway.isFinite, configuration.leeway >= 0, configuration.dpop.maximumProofAge.isFinite,
            configuration.dpop.maximumProofAge > 0, configuration.dpop.proofLeeway.isFinite, configuration.dpop.proofLeeway >= 0
        else { throw invalid("The leeways and the proof age must be finite; the leeways not negative, the proof age positive.") }
        guard configuration.maximumTokenLength > 0, configuration.dpop.maximumProofLength > 0 else {
            throw invalid("The token and proof length limits must be positive.")
        }
    }
}
