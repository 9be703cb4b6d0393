import ArgumentParser
import OIDC

/// How the client proves itself to the provider, beyond a client secret (`oidc login`): the
/// method, and a private key for `private_key_jwt`. The profile remembers all of it, the key only as
/// its path.
struct ClientAuthOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "How the client authenticates: \(ClientAuthenticationMethod.allCases.map(\.rawValue).joined(separator: ", ")) (default: from the credentials given and the provider's token_endpoint_auth_methods_supported).",
            valueName: "method"))
    var clientAuth: String?

    @Option(help: "A private key (PEM: PKCS#8, SEC1 or PKCS#1; or a private JWK) that signs private_key_jwt assertions; only you may read it (chmod 600). The path is remembered.")
    var privateKeyFile: String?

    @Option(help: "The kid of the assertions (default: the key file's own, when it is a JWK with a kid).")
    var keyId: String?

    @Option(help: "The assertions' algorithm, when not the key's usual one (an RSA key signs RS256 unless told PS256).")
    var keyAlgorithm: String?

    @Option(help: "Whom assertions are addressed to: issuer (default; FAPI 2.0, RFC 7523bis) or endpoint (the URL called, for servers that follow OIDC Core §9's older advice).")
    var assertionAudience: AssertionAudienceChoice?

    enum AssertionAudienceChoice: String, ExpressibleByArgument, CaseIterable {
        case issuer, endpoint
    }

    func validate() throws {
        if let clientAuth, ClientAuthenticationMethod(rawValue: clientAuth) == nil {
            throw ValidationError("--client-auth: '\(clientAuth)' is not one of \(ClientAuthenticationMethod.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        if let keyAlgorithm, JWSAlgorithm(rawValue: keyAlgorithm) == nil {
            throw ValidationError("--key-algorithm: '\(keyAlgorithm)' is not a JWS algorithm (RS256, PS256, ES256, EdDSA, …)")
        }
        if let keyId, keyId.isEmpty { throw ValidationError("--key-id must not be empty") }
    }

    /// These flags laid over `profile`.
    func applied(to profile: Profile, absolute: (String) -> String) -> Profile {
        var profile = profile
        if let clientAuth { profile.clientAuth = clientAuth }
        if let privateKeyFile { profile.privateKeyFile = absolute(privateKeyFile) }
        if let keyId { profile.keyID = keyId }
        if let keyAlgorithm { profile.keyAlgorithm = keyAlgorithm }
        if let assertionAudience { profile.assertionAudience = assertionAudience.rawValue }
        return profile
    }
}
