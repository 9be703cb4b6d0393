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

    @Option(help: "A private key (PEM: PKCS#8, SEC1 or PKCS#1; or a private JWK) that signs private_key_jwt assertions (and request objects); only you may read it (chmod 600). Its kid is --key-id, else the JWK's own, else the key's RFC 7638 thumbprint. The path is remembered.")
    var privateKeyFile: String?

    @Option(help: "The kid of the assertions and request objects (default: the key file's own, when it is a JWK with a kid; else the key's RFC 7638 JWK thumbprint, which servers that look keys up by kid, such as glewlwyd, must have registered).")
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
}

extension ClientAuthOptions {
    /// The refusal of a client assertion (`invalid_client`, or glewlwyd's bare 401/403) in this
    /// command's words: the flags that set what the provider may have refused, and what each is now.
    /// `nil` for any other error.
    static func assertionRefusal(_ error: OIDCError) -> String? {
        guard let method = error.context["clientAssertion"] else { return nil }
        let endpoint = error.context["endpoint"] ?? "the token endpoint"
        let status = error.context["status"].map { "HTTP \($0)" } ?? "a refusal"
        let detail = error.providerError.map { provider in
            UntrustedText.sanitized(provider.error, limit: 64) + (provider.errorDescription.map { " (\(UntrustedText.sanitized($0)))" } ?? "")
        }
        let audience = error.context["assertionAudience"] ?? "issuer"
        let otherAudience = audience == "issuer"
            ? "glewlwyd and servers that follow OIDC Core §9's older text want --assertion-audience endpoint"
            : "FAPI 2.0 servers want --assertion-audience issuer"
        var causes: [String] = []
        if method == ClientAuthenticationMethod.privateKeyJWT.rawValue {
            causes.append("the key of --private-key-file is not one the provider has registered for this client (--client-id)")
            let kid = error.context["kid"].map { "'\($0)'" } ?? "none"
            causes.append("the provider registered the key under another kid than the assertions carry: --key-id (now \(kid); the key file's own kid, else the key's RFC 7638 thumbprint)")
        } else {
            causes.append("the secret (--client-secret-file) is not this client's, or the client is not registered for client_secret_jwt (--client-auth)")
        }
        causes.append("whom the assertions are addressed to: --assertion-audience (now \(audience); \(otherAudience))")
        if error.providerError == nil {
            // A refusal without an OAuth error may be about the request, not the client: glewlwyd
            // answers a client-credentials request without a scope 403 with an empty body.
            causes.append("the provider may require a --scope (glewlwyd refuses a request without one so)")
        }
        return "The provider at \(endpoint) refused the client's \(method) assertion (\(status)\(detail.map { ": \($0)" } ?? ", no OAuth error")). "
            + "Possible causes: " + causes.enumerated().map { "(\($0.offset + 1)) \($0.element)" }.joined(separator: "; ")
            + ". oidc token, refresh and request use what oidc login was given: log in again with the flags that fix it."
    }
}
