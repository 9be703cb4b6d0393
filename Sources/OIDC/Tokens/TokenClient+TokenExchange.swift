internal import Foundation

/// A token exchange (RFC 8693): a token the client holds (a user's access token, say) traded for
/// another one, for another audience or with less scope, or acting for the subject.
public struct TokenExchangeRequest: Sendable {
    /// RFC 8693 §3's token type identifiers.
    public enum TokenType {
        /// `urn:ietf:params:oauth:token-type:access_token`.
        public static let accessToken = "urn:ietf:params:oauth:token-type:access_token"
        /// `urn:ietf:params:oauth:token-type:refresh_token`.
        public static let refreshToken = "urn:ietf:params:oauth:token-type:refresh_token"
        /// `urn:ietf:params:oauth:token-type:id_token`.
        public static let idToken = "urn:ietf:params:oauth:token-type:id_token"
        /// `urn:ietf:params:oauth:token-type:jwt`.
        public static let jwt = "urn:ietf:params:oauth:token-type:jwt"
    }

    /// `subject_token`: the token that says on whose behalf the new one acts.
    public var subjectToken: Secret
    /// `subject_token_type`: an access token unless told otherwise.
    public var subjectTokenType: String
    /// `actor_token`: the token of the party that acts (delegation), if any.
    public var actorToken: Secret?
    /// `actor_token_type`, required with an actor token.
    public var actorTokenType: String?
    /// `resource` values (URIs of where the new token is used).
    public var resources: [String]
    /// `audience` values (logical names of where the new token is used).
    public var audiences: [String]
    /// `scope` values.
    public var scopes: [String]
    /// `requested_token_type`, if a particular type is wanted.
    public var requestedTokenType: String?

    /// A request to exchange `subjectToken` (an access token unless `subjectTokenType` says
    /// otherwise); set the other members as needed.
    public init(subjectToken: Secret, subjectTokenType: String = TokenType.accessToken) {
        self.subjectToken = subjectToken
        self.subjectTokenType = subjectTokenType
        self.resources = []
        self.audiences = []
        self.scopes = []
    }
}

/// What a token exchange gave.
public struct TokenExchangeResult: Sendable {
    /// The issued token as `access_token` (of type ``TokenSet/tokenType`` `Bearer`, or `N_A` when it
    /// is not an access token), usually without a refresh token.
    public let tokens: TokenSet
    /// `issued_token_type`: what the issued token is (RFC 8693 §2.2.1).
    public let issuedTokenType: String
}

extension TokenClient {
    /// The grant type of RFC 8693.
    static let tokenExchangeGrant = "urn:ietf:params:oauth:grant-type:token-exchange"

    /// Exchanges a token (RFC 8693 §2): `subject_token` and its type, an optional actor token,
    /// `resource`, `audience`, `scope` and `requested_token_type`, authenticated as the client.
    ///
    /// - Throws: ``OIDCError/Code/invalidArgument`` for an actor token without its type;
    ///   ``OIDCError/Code/malformedResponse`` for an answer without `issued_token_type` or whose
    ///   `token_type` is neither `Bearer` nor `N_A`; what ``grant(_:parameters:scopes:)`` throws.
    public func exchangeToken(_ request: TokenExchangeRequest) async throws(OIDCError) -> TokenExchangeResult {
        var parameters = [
            OAuthParameter("subject_token", request.subjectToken.revealedValue), OAuthParameter("subject_token_type", request.subjectTokenType),
        ]
        if let actor = request.actorToken {
            guard let type = request.actorTokenType, !type.isEmpty else {
                throw .invalidArgument("An actor token needs its type (actor_token_type, RFC 8693 §2.1).")
            }
            parameters += [OAuthParameter("actor_token", actor.revealedValue), OAuthParameter("actor_token_type", type)]
        }
        parameters += request.resources.map { OAuthParameter("resource", $0) }
        parameters += request.audiences.map { OAuthParameter("audience", $0) }
        if let requested = request.requestedTokenType { parameters.append(OAuthParameter("requested_token_type", requested)) }
        let scopes = request.scopes
        return try await postGrant(Self.tokenExchangeGrant, parameters: parameters, scopes: scopes) {
            [self] (response: HTTPResponse) throws(OIDCError) -> TokenExchangeResult in
            let tokens = try tokens(from: response, requestedScopes: scopes, grantType: Self.tokenExchangeGrant, acceptedTypes: ["Bearer", "N_A"])
            guard let issued = (try? StrictJSONParser.parseObject(response.body))?["issued_token_type"]?.stringValue, !issued.isEmpty else {
                throw OIDCError(.malformedResponse, "The token exchange's answer has no issued_token_type (RFC 8693 §2.2.1).")
            }
            return TokenExchangeResult(tokens: tokens, issuedTokenType: issued)
        }
    }
}
