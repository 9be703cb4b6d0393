extension StoredLogin {
    /// How a login's tokens were granted, kept with them when the grant decides how new ones are
    /// had: a client's own tokens (client credentials, RFC 6749 §4.4) come with no refresh token,
    /// and are asked for again, with the same scopes and parameters, when they expire; a device
    /// login (RFC 8628) may have no ID token.
    public struct Grant: Sendable, Hashable {
        /// The grant type, as the token request names it (`client_credentials`,
        /// `urn:ietf:params:oauth:grant-type:device_code`).
        public var type: GrantType
        /// The scope values asked for.
        public var scopes: [String]
        /// The token request's other parameters, such as `resource` (RFC 8707).
        public var parameters: [OAuthParameter]

        /// A grant from its parts.
        public init(type: GrantType, scopes: [String] = [], parameters: [OAuthParameter] = []) {
            self.type = type
            self.scopes = scopes
            self.parameters = parameters
        }

        /// The client's own tokens, asked for with `scopes` and `parameters`.
        public static func clientCredentials(scopes: [String] = [], parameters: [OAuthParameter] = []) -> Grant {
            Grant(type: .clientCredentials, scopes: scopes, parameters: parameters)
        }

        /// The device authorization grant (RFC 8628).
        public static let deviceCode = Grant(type: .deviceCode)

        /// The JWT bearer grant (RFC 7523 §2.1), asked for with `scopes` and `parameters`: new
        /// tokens come from presenting the assertion again (its holder's current one), as a
        /// client's own tokens do from its credentials.
        public static func jwtBearer(scopes: [String] = [], parameters: [OAuthParameter] = []) -> Grant {
            Grant(type: .jwtBearer, scopes: scopes, parameters: parameters)
        }

        /// Whether the tokens are the client's own (client credentials).
        package var isClientCredentialsGrant: Bool { type == .clientCredentials }

        /// Whether the tokens came for an assertion (the JWT bearer grant).
        package var isJWTBearerGrant: Bool { type == .jwtBearer }
    }
}

extension StoredLogin.Grant {
    /// The attributes in which `oidc` kept the grant before ``StoredLogin/grant``: `grant_type`,
    /// `scope` (space-separated) and `parameters` (form-encoded).
    package enum LegacyAttribute {
        package static let type = "grant_type"
        package static let scope = "scope"
        package static let parameters = "parameters"
    }

    /// The grant in those attributes, for a store shared with an earlier version of `oidc`.
    package var legacyAttributes: [String: String] {
        var attributes = [LegacyAttribute.type: type.rawValue]
        if !scopes.isEmpty { attributes[LegacyAttribute.scope] = scopes.joined(separator: " ") }
        if !parameters.isEmpty { attributes[LegacyAttribute.parameters] = FormURLEncoding.encode(parameters) }
        return attributes
    }

    /// The grant that an earlier version's attributes name; `nil` without `grant_type`. Parameters
    /// that do not decode are left out, as that version read them.
    package init?(legacyAttributes attributes: [String: String]) {
        guard let type = attributes[LegacyAttribute.type] else { return nil }
        self.init(
            type: GrantType(rawValue: type), scopes: (attributes[LegacyAttribute.scope] ?? "").split(separator: " ").map(String.init),
            parameters: (try? FormURLEncoding.decode(attributes[LegacyAttribute.parameters] ?? "", allowDuplicates: true)) ?? []
        )
    }
}
