extension TestProvider {
    /// The protected resource the provider serves beside itself at `/resource` (``TestProvider/resourceURL``),
    /// as an MCP server or any API found from its URL is served: RFC 9728 metadata, a 401 whose
    /// `WWW-Authenticate` names it, tokens bound to the resource (RFC 8707 `aud`), and a step-up
    /// route, `/resource/admin`, that answers 403 `insufficient_scope` (RFC 6750 §3.1) unless the
    /// token has ``stepUpScope``.
    public struct ProtectedResource: Sendable, Equatable {
        /// Where the metadata document is served.
        public enum MetadataLocation: Sendable, Equatable {
            /// At the resource's path inserted after `/.well-known/oauth-protected-resource` (RFC 9728 §3.1), the default.
            case pathInserted
            /// Only at the origin's root well-known URL, `/.well-known/oauth-protected-resource`.
            case root
            /// Only at `/metadata/resource`, which no well-known rule finds: only the 401's `resource_metadata` names it.
            case challengeOnly
        }

        /// Where the metadata document is served; ``MetadataLocation/pathInserted`` by default.
        public var metadataLocation: MetadataLocation = .pathInserted
        /// Whether the 401 names the document (`resource_metadata`); on by default.
        public var challengeNamesMetadata = true
        /// A `WWW-Authenticate` challenge sent before the `Bearer` one in the 401, such as
        /// `Negotiate` (clients that read only the first challenge miss the metadata); `nil` by default.
        public var precedingChallenge: String?
        /// The `scope` of the 401's challenge (what a login should ask for); `nil` sends none.
        public var challengeScope: String?
        /// `scopes_supported` of the document.
        public var scopesSupported: [String] = ["read", "write", "admin"]
        /// The scope `/resource/admin` requires; without it the answer is 403 `insufficient_scope` with `scope` naming it.
        public var stepUpScope = "admin"
        /// The document's `resource` instead of the true identifier (a mismatch for refusal tests); `nil` by default.
        public var advertisedResource: String?
        /// The document's `authorization_servers` instead of `[issuer]`; `[]` lists none.
        public var authorizationServers: [String]?
        /// Whether an access token is taken only when it was issued for this resource (its `aud`,
        /// RFC 8707); on by default. Off, any valid token of the provider is taken.
        public var requiresAudience = true
        /// Whether the resource takes only DPoP-bound tokens (RFC 9449 §7.1): its document says
        /// `dpop_bound_access_tokens_required` (RFC 9728 §2), its 401 challenges under the `DPoP`
        /// scheme, and a valid bearer token is refused (401, `DPoP error="invalid_token"`). Off by
        /// default. The provider's ``Configuration/dpop`` must offer DPoP.
        public var requiresDPoP = false
        /// Whether the token endpoint answers `invalid_target` to a refresh that carries `resource`,
        /// as Microsoft Entra does (AADSTS9010010); off by default.
        public var refusesResourceOnRefresh = false

        /// The defaults: metadata path-inserted, named by the challenge, tokens bound to the resource.
        public init() {}
    }

    /// Dynamic client registration (RFC 7591) at `{issuer}/register`.
    public struct Registration: Sendable, Equatable {
        /// Whether a registered client's loopback redirect URIs must match with their port, as the
        /// MCP Python SDK's server and Cloudflare's provider do; off by default (RFC 8252 §7.3: any port).
        public var exactLoopbackPort = false
        /// Whether the answer carries a `registration_access_token` and `registration_client_uri`
        /// (RFC 7592); on by default.
        public var issuesRegistrationAccessToken = true
        /// Whether a read of the registration (`GET` at its `registration_client_uri`, RFC 7592
        /// §2.1) answers with a new `registration_access_token`, the old one no longer valid; off
        /// by default (the same token is given back).
        public var rotatesRegistrationAccessToken = false
        /// Whether the metadata says `client_id_metadata_document_supported` (the Client ID Metadata
        /// Document draft): an https `client_id` is then taken as is at `/authorize`, as the URL of
        /// the client's document (the provider trusts it without fetching it). Off by default.
        public var clientIDMetadataDocuments = false

        /// The defaults: any loopback port, a registration access token.
        public init() {}
    }

    /// Which metadata documents the provider serves.
    public enum MetadataDocuments: Sendable, Equatable {
        /// OpenID discovery and RFC 8414 (the default).
        case openIDAndOAuth
        /// Only RFC 8414's `/.well-known/oauth-authorization-server{path}`, without `jwks_uri`:
        /// a plain OAuth 2.0 server, as most MCP authorization servers are. No ID token is issued.
        case oauthOnly
    }
}
