internal import Foundation

/// A protected resource's metadata document (RFC 9728 §2) as a client reads it: `resource`
/// (required, kept as sent so that it goes out byte for byte), `authorization_servers`,
/// `scopes_supported`, the DPoP members. Parsed with the strict parser (duplicate members, depth,
/// size refused); members of the wrong type are refused.
struct ResourceMetadataDocument: Sendable, Equatable {
    var resource: String
    var authorizationServers: [String]
    var scopesSupported: [String]?
    var dpopSigningAlgorithms: [String]?
    var dpopBoundAccessTokensRequired: Bool

    /// Parses `json`, a document fetched from `source`.
    ///
    /// - Throws: ``OIDCError/Code/malformedResponse`` naming the member and its rule.
    init(json: [UInt8], source: URL) throws(OIDCError) {
        let object: [String: JSONValue]
        do { object = try StrictJSONParser.parseObject(json) } catch {
            throw OIDCError(
                .malformedResponse, "The protected resource metadata at \(source.absoluteString) is not a valid JSON object (\(error)).",
                context: ["rule": "RFC 9728 §3.2 JSON object"])
        }
        let members = JSONObjectReader(object, document: "The protected resource metadata")
        guard let resource = try members.nonEmptyString("resource") else {
            throw OIDCError(.malformedResponse, "The protected resource metadata has no 'resource' (RFC 9728 §2).", context: ["rule": "RFC 9728 §2 resource"])
        }
        self.resource = resource
        authorizationServers = try members.strings("authorization_servers") ?? []
        scopesSupported = try members.strings("scopes_supported")
        dpopSigningAlgorithms = try members.strings("dpop_signing_alg_values_supported")
        dpopBoundAccessTokensRequired = try members.bool("dpop_bound_access_tokens_required") ?? false
    }
}
