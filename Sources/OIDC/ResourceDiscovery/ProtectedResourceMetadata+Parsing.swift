internal import Foundation

extension ProtectedResourceMetadata {
    /// Reads a metadata document (RFC 9728 §2, §3.2) with the strict parser (duplicate members,
    /// depth and size refused): `resource` (required, an absolute URL, kept as written),
    /// `authorization_servers`, `scopes_supported`, `bearer_methods_supported`,
    /// `dpop_signing_alg_values_supported` (names this library does not know are left out),
    /// `dpop_bound_access_tokens_required`, `tls_client_certificate_bound_access_tokens`,
    /// `resource_name` and `resource_documentation`; other members are ignored.
    ///
    /// - Throws: ``OIDCError/Code/malformedResponse`` naming the member and its rule, for a document
    ///   that is not a JSON object, lacks `resource`, or has a member of the wrong type.
    package init(json: [UInt8]) throws(OIDCError) {
        let object: [String: JSONValue]
        do { object = try StrictJSONParser.parseObject(json) } catch {
            throw OIDCError(
                .malformedResponse, "The protected resource metadata is not a valid JSON object (\(error)).",
                context: ["rule": "RFC 9728 §3.2 JSON object"])
        }
        let members = JSONObjectReader(object, document: "The protected resource metadata")
        guard let text = try members.nonEmptyString("resource"), let resource = URL(string: text), resource.scheme != nil else {
            throw OIDCError(
                .malformedResponse, "The protected resource metadata has no 'resource' URL (RFC 9728 §2).", context: ["rule": "RFC 9728 §2 resource"])
        }
        self.init(
            resource: resource, authorizationServers: try members.strings("authorization_servers") ?? [],
            scopesSupported: try members.strings("scopes_supported") ?? [],
            dpopSigningAlgorithms: (try members.strings("dpop_signing_alg_values_supported") ?? []).compactMap(JWSAlgorithm.init(rawValue:)),
            dpopBoundAccessTokensRequired: try members.bool("dpop_bound_access_tokens_required") ?? false)
        if let methods = try members.strings("bearer_methods_supported") { bearerMethodsSupported = methods }
        certificateBoundAccessTokens = try members.bool("tls_client_certificate_bound_access_tokens") ?? false
        resourceName = try members.string("resource_name")
        resourceDocumentation = try members.string("resource_documentation").flatMap(URL.init(string:))
    }
}
