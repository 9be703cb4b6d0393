import ArgumentParser
import OIDC

extension Profile {
    /// The client authentication method of a login: `--client-auth` when given; otherwise
    /// `private_key_jwt` with a private key, a secret method with a secret (the preset's own, else
    /// the first of `client_secret_basic`, `client_secret_post`, `client_secret_jwt` the provider
    /// lists, `client_secret_basic` when it lists none: RFC 8414's default), and `none` without
    /// credentials.
    ///
    /// - Parameters:
    ///   - hasSecret: whether a client secret was given (flag or file).
    ///   - supported: the provider's `token_endpoint_auth_methods_supported`, when discovered.
    ///   - preset: the method a preset uses with a secret.
    /// - Throws: a usage error when the method and the credentials given do not go together.
    func clientAuthenticationMethod(hasSecret: Bool, supported: [String]?, preset: ClientAuthenticationMethod? = nil) throws -> ClientAuthenticationMethod {
        let method: ClientAuthenticationMethod
        if let name = clientAuth {
            guard let explicit = ClientAuthenticationMethod(rawValue: name) else { throw ValidationError("--client-auth: '\(name)' is not a method") }
            method = explicit
        } else if privateKeyFile != nil {
            method = .privateKeyJWT
        } else if hasSecret {
            method = .forSecret(supported: supported, preset: preset)
        } else {
            method = .none
        }
        switch method {
        case .none:
            if hasSecret || privateKeyFile != nil {
                throw ValidationError("--client-auth none sends no credentials: leave out the client secret and --private-key-file, or choose another method")
            }
        case .clientSecretBasic, .clientSecretPost, .clientSecretJWT:
            guard hasSecret else { throw ValidationError("--client-auth \(method.rawValue) needs the client secret: give --client-secret-file FILE") }
            if privateKeyFile != nil { throw ValidationError("--private-key-file is for private_key_jwt, not \(method.rawValue)") }
        case .privateKeyJWT:
            guard privateKeyFile != nil else { throw ValidationError("--client-auth private_key_jwt needs --private-key-file FILE") }
            if hasSecret { throw ValidationError("private_key_jwt signs with --private-key-file: leave out the client secret") }
        case .tlsClientAuth, .selfSignedTLSClientAuth:
            guard clientCertificateFile != nil, clientKeyFile != nil else {
                throw ValidationError("--client-auth \(method.rawValue) needs --client-certificate FILE and --client-key FILE")
            }
            if hasSecret || privateKeyFile != nil {
                throw ValidationError("\(method.rawValue) proves the client with its TLS certificate: leave out the client secret and --private-key-file")
            }
        }
        if let supported, method != .none, !supported.contains(method.rawValue) {
            Console.error(
                "oidc: warning: the provider does not list \(method.rawValue) in token_endpoint_auth_methods_supported (it lists \(supported.isEmpty ? "none" : supported.joined(separator: ", "))); trying it anyway"
            )
        }
        return method
    }

    /// How the client authenticates with `method`: `secret` for the secret methods, the profile's
    /// private key (read now, and refused when others may read it) for `private_key_jwt`; assertions
    /// addressed as `--assertion-audience` says. Without the credential the method needs, requests
    /// are refused before anything is sent.
    ///
    /// - Throws: ``OIDCError/Code/invalidArgument`` (exit 2) naming `--private-key-file` when the key
    ///   cannot be read, is not private to you, or is not a usable key.
    func clientAuthentication(method: ClientAuthenticationMethod, secret: Secret?) throws(OIDCError) -> ClientAuthentication {
        var authentication: ClientAuthentication
        switch method {
        case .privateKeyJWT:
            guard let path = privateKeyFile else { return ClientAuthentication(method: method, secret: nil) }
            let algorithm = keyAlgorithm.flatMap(JWSAlgorithm.init(rawValue:))
            do {
                authentication = .privateKeyJWT(try JWSSigningKey(contentsOfFile: path, algorithm: algorithm, keyID: keyID))
            } catch {
                throw OIDCError(.invalidArgument, "--private-key-file: \(error.message)", context: ["path": path])
            }
        case .clientSecretJWT:
            guard let secret else { return ClientAuthentication(method: method, secret: nil) }
            let algorithm = keyAlgorithm.flatMap(JWSAlgorithm.init(rawValue:)) ?? .hs256
            authentication = .clientSecretJWT(secret, algorithm: algorithm)
        default:
            authentication = ClientAuthentication(method: method, secret: secret)
        }
        if assertionAudience == ClientAuthOptions.AssertionAudienceChoice.endpoint.rawValue { authentication.assertionAudience = .endpoint }
        return authentication
    }

    /// Whether the credential `method` needs is named by the profile (a secret file or a key file).
    func hasCredential(for method: ClientAuthenticationMethod) -> Bool {
        switch method {
        case .none: true
        case .privateKeyJWT: privateKeyFile != nil
        case .tlsClientAuth, .selfSignedTLSClientAuth: clientCertificateFile != nil && clientKeyFile != nil
        default: clientSecretFile != nil
        }
    }

    /// The key that signs request objects (`--request-object`): the profile's `--private-key-file`.
    ///
    /// - Throws: a usage error (exit 2) without a key file, or naming it when it cannot be used.
    func requestObjectKey() throws -> JWSSigningKey {
        guard let path = privateKeyFile else {
            throw ValidationError("--request-object (or a provider that takes only signed request objects) needs --client-auth private_key_jwt --private-key-file FILE: the key the provider has registered for this client")
        }
        do {
            return try JWSSigningKey(contentsOfFile: path, algorithm: keyAlgorithm.flatMap(JWSAlgorithm.init(rawValue:)), keyID: keyID)
        } catch {
            throw OIDCError(.invalidArgument, "--private-key-file: \(error.message)", context: ["path": path])
        }
    }
}
