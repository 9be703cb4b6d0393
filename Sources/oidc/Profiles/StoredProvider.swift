import ArgumentParser
import Foundation
import OIDC

/// What the CLI remembers with a login besides its provider (``StoredLogin/provider``, which names
/// the endpoints, so that refresh, revocation and requests need no discovery: `oidc token` must not
/// touch the network while its token is fresh): the preset and the profile, as attributes.
/// Logins stored by earlier versions named their endpoints in attributes too; they are read as they are.
enum StoredProvider {
    enum Attribute {
        static let provider = "provider"
        static let environment = "environment"
        static let profile = "profile"
        // Earlier versions' endpoint attributes.
        static let tokenEndpoint = "token_endpoint"
        static let revocationEndpoint = "revocation_endpoint"
        static let jwksURI = "jwks_uri"
        static let userinfoEndpoint = "userinfo_endpoint"
        static let authenticationMethod = "token_endpoint_auth_method"
    }

    /// The attributes to keep with a login of the profile `profile`.
    static func attributes(kind: Profile.Kind, environment: String?, profile: String) -> [String: String] {
        var attributes: [String: String] = [Attribute.provider: kind.rawValue, Attribute.profile: profile]
        attributes[Attribute.environment] = environment
        return attributes
    }

    /// The provider of a stored login, without the network: as it was stored with the login, or,
    /// for a login of an earlier version, rebuilt from its attributes; `nil` when the login names no
    /// token endpoint (injected without one).
    /// The client authenticates the way it did at login: a confidential client without its secret at
    /// hand is refused by ``TokenClient`` before anything is sent (never an unauthenticated refresh,
    /// which the provider would answer `invalid_client`).
    static func configuration(of login: StoredLogin) -> ProviderConfiguration? {
        if let provider = login.provider { return provider.tokenEndpoint == nil ? nil : provider }
        let attributes = login.attributes
        let method = attributes[Attribute.authenticationMethod].flatMap(ClientAuthenticationMethod.init(rawValue:)) ?? .none
        if attributes[Attribute.provider] == Profile.Kind.schibsted.rawValue,
            let environment = attributes[Attribute.environment].flatMap(Schibsted.Environment.init(name:))
        {
            var configuration = ProviderConfiguration.schibsted(environment)
            configuration.clientAuthentication = method
            return configuration
        }
        guard let tokenEndpoint = attributes[Attribute.tokenEndpoint].flatMap(URL.init(string:)) else { return nil }
        var configuration = ProviderConfiguration(
            issuer: login.issuer, authorizationEndpoint: nil, tokenEndpoint: tokenEndpoint,
            jwksURI: attributes[Attribute.jwksURI].flatMap(URL.init(string:)), clientAuthentication: method
        )
        configuration.revocationEndpoint = attributes[Attribute.revocationEndpoint].flatMap(URL.init(string:))
        configuration.userinfoEndpoint = attributes[Attribute.userinfoEndpoint].flatMap(URL.init(string:))
        return configuration
    }

    /// How the login's client authenticates: as stored with it, or as an earlier version's attribute says.
    static func authenticationMethod(of login: StoredLogin) -> ClientAuthenticationMethod {
        login.provider?.clientAuthentication
            ?? login.attributes[Attribute.authenticationMethod].flatMap(ClientAuthenticationMethod.init(rawValue:)) ?? .none
    }
}

/// A client secret read from a file (never from the command line of a later command: `ps` shows
/// arguments to every user), read the way the token store reads its key files (review 3, L4): one
/// descriptor opened without following a link, and refused unless it is a regular file of yours (or
/// root's) that no other user can read or write. A file that others could replace or read is not
/// a secret: a secret planted by another user would be sent to the provider, whose `invalid_client`
/// answer logs the profile out.
enum ClientSecretFile {
    /// - Throws: ``OIDCError/Code/invalidArgument`` (exit 2) naming the flag and the file, and what
    ///   to do (`chmod 600`) when it is refused.
    static func read(_ path: String, flag: String = "--client-secret-file") throws(OIDCError) -> Secret {
        do { return try Secret.fromFile(atPath: path) } catch {
            throw OIDCError(.invalidArgument, "\(flag): \(error.message)", context: ["path": path])
        }
    }
}
