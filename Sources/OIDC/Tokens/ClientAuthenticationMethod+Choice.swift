internal import Foundation

extension ClientAuthenticationMethod {
    /// The shared-secret methods, in the order a client with a secret prefers them.
    static let secretMethods: [ClientAuthenticationMethod] = [.clientSecretBasic, .clientSecretPost, .clientSecretJWT]

    /// How a client with a shared secret authenticates at a provider that lists `supported`
    /// (`token_endpoint_auth_methods_supported`): the `preset`'s method when it names one; else the
    /// first of `client_secret_basic`, `client_secret_post`, `client_secret_jwt` the provider lists;
    /// `client_secret_basic` when it lists none of them, or nothing (RFC 8414 §2's default, RFC
    /// 6749 §2.3.1's). The one decision the relying party, discovery from a resource and the `oidc`
    /// command make.
    package static func forSecret(supported: [String]?, preset: ClientAuthenticationMethod? = nil) -> ClientAuthenticationMethod {
        if let preset, preset != .none { return preset }
        let listed = supported ?? []
        return secretMethods.first { listed.contains($0.rawValue) } ?? .clientSecretBasic
    }
}
