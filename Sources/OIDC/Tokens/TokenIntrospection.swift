public import Foundation
internal import Logging

/// What a provider says of a token (RFC 7662 §2.2): whether it is active, and, when it is, its
/// standard members typed; every member is kept in ``raw``.
///
/// A token that is not active says nothing else worth trusting (§2.2: the other members may be
/// absent), so the typed members of an inactive answer are all `nil`.
public struct TokenIntrospection: Sendable {
    /// `active`: whether the token is valid now, at this provider, for this client to ask about.
    public let active: Bool
    /// `scope`, split into its values.
    public let scopes: [String]?
    /// `client_id`: the client the token was issued to.
    public let clientID: String?
    /// `username`: a human-readable name of the resource owner.
    public let username: String?
    /// `token_type`, such as `Bearer` or `DPoP`.
    public let tokenType: String?
    /// `exp`.
    public let expiresAt: Date?
    /// `iat`.
    public let issuedAt: Date?
    /// `nbf`.
    public let notBefore: Date?
    /// `sub`.
    public let subject: String?
    /// `aud`, as a list (a single string is a list of one).
    public let audience: [String]?
    /// `iss`.
    public let issuer: String?
    /// `jti`.
    public let tokenID: String?
    /// The whole answer, as parsed (with members this type does not know, such as `cnf`).
    public let raw: [String: JSONValue]

    /// Reads an introspection response.
    ///
    /// - Throws: ``OIDCError/Code/malformedResponse`` for a body that is not a JSON object, without a
    ///   boolean `active` (RFC 7662 §2.2: REQUIRED), or with a standard member of the wrong type.
    package init(answer json: [UInt8]) throws(OIDCError) {
        let object: [String: JSONValue]
        do { object = try StrictJSONParser.parseObject(json) } catch {
            throw OIDCError(.malformedResponse, "The introspection answer is not a valid JSON object (\(error)).")
        }
        guard case .bool(let active)? = object["active"] else {
            throw OIDCError(.malformedResponse, "The introspection answer has no boolean 'active' (RFC 7662 §2.2).")
        }
        let members = JSONObjectReader(object, document: "The introspection answer")
        self.active = active
        self.raw = object
        guard active else {
            (scopes, clientID, username, tokenType, expiresAt, issuedAt, notBefore, subject, audience, issuer, tokenID) =
                (nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil)
            return
        }
        scopes = try members.string("scope").map { $0.split(separator: " ").map(String.init) }
        clientID = try members.string("client_id")
        username = try members.string("username")
        tokenType = try members.string("token_type")
        expiresAt = try members.date("exp")
        issuedAt = try members.date("iat")
        notBefore = try members.date("nbf")
        subject = try members.string("sub")
        do { audience = try Audience.values(object["aud"]) } catch {
            throw OIDCError(.malformedResponse, "The introspection answer's 'aud' \(Audience.rule).")
        }
        issuer = try members.string("iss")
        tokenID = try members.string("jti")
    }
}

extension TokenClient {
    /// Asks the provider about `token` (RFC 7662 §2.1), authenticated as the client.
    ///
    /// - Parameters:
    ///   - token: the token to ask about.
    ///   - hint: `access_token` or `refresh_token`, to speed up the lookup.
    /// - Throws: ``OIDCError/Code/invalidArgument`` when the provider has no introspection endpoint;
    ///   ``OIDCError/Code/malformedResponse`` for an answer that is not a JSON object, without a
    ///   boolean `active` (RFC 7662 §2.2: REQUIRED), or with a standard member of the wrong type; as
    ///   ``revoke(_:hint:)`` otherwise.
    public func introspect(_ token: Secret, hint: TokenTypeHint? = nil) async throws(OIDCError) -> TokenIntrospection {
        var form = [OAuthParameter("token", token.revealedValue)]
        if let hint { form.append(OAuthParameter("token_type_hint", hint.rawValue)) }
        let url = try endpoint(provider.introspectionEndpoint, "introspection endpoint")
        let answer = try await post(form, .introspection, to: url) { (response: HTTPResponse) throws(OIDCError) -> TokenIntrospection in
            try TokenIntrospection(answer: response.body)
        }
        logger.debug("token introspected", metadata: ["active": .bool(answer.active), "token_type_hint": .string(hint?.rawValue ?? "none")])
        return answer
    }
}
