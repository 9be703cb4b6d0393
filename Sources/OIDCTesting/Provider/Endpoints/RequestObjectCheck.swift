internal import Foundation
internal import OIDC

/// A signed request object (RFC 9101) checked as a careful server does: a compact JWS by a key of
/// the client's registered JWKS (never `none` or an HMAC), `typ` `oauth-authz-req+jwt`, `iss` the
/// client, `aud` this issuer, `exp` in the future and at most an hour after `nbf`, a `client_id`
/// claim (when present) that is the client's, a `jti` not seen before. Its claims, less the JWT
/// ones, are the authorization request's parameters; nothing outside it counts (RFC 9101 §6.3).
enum RequestObjectCheck {
    /// - Parameter untyped: a signed CIBA request (CIBA Core §7.1.1), which names no `typ`.
    static func parameters(_ object: String, clientID: String, _ context: ProviderContext, untyped: Bool = false) async throws(OAuthError)
        -> [OAuthParameter]
    {
        guard let client = context.client(clientID), let jwks = client.jwks else {
            throw Self.invalid("The client has no registered keys to check a request object with.")
        }
        let jws: ParsedJWS
        let claims: [String: JSONValue]
        do {
            jws = try ParsedJWS(object)
            claims = try StrictJSONParser.parseObject(jws.payload)
            try ClientAssertionCheck.verify(jws, withKeysOf: jwks, requiresKeyID: context.configuration.requiresKeyID)
        } catch {
            throw Self.invalid("The request object is not a JWS signed by a key of the client (\((error as? OIDCError).map { "\($0.code)" } ?? "unreadable")).")
        }
        let type = jws.header["typ"]?.stringValue?.lowercased()
        guard type == AuthorizationRequest.requestObjectType || type == "application/" + AuthorizationRequest.requestObjectType
            || (untyped && (type == nil || type == "jwt"))
        else {
            throw Self.invalid("The request object's typ must be \(AuthorizationRequest.requestObjectType).")
        }
        guard claims["iss"]?.stringValue == clientID else { throw Self.invalid("The request object's iss must be the client id.") }
        guard ClientAssertionCheck.audiences(claims["aud"]).contains(context.issuer) else { throw Self.invalid("The request object's aud must be the issuer.") }
        if let inside = claims["client_id"], inside.stringValue != clientID {
            throw Self.invalid("The request object's client_id is not the request's.")
        }
        let now = await context.state.now.timeIntervalSince1970
        guard let expiry = claims["exp"]?.numberValue, expiry > now else { throw Self.invalid("The request object has expired, or has no exp.") }
        // FAPI 2.0 Message Signing: nbf is required, at most an hour before exp.
        guard let notBefore = claims["nbf"]?.numberValue, notBefore <= now + 60, expiry - notBefore <= 3600 else {
            throw Self.invalid("The request object has no nbf, is not valid yet, or is valid for more than an hour.")
        }
        if let name = ["request", "request_uri"].first(where: { claims[$0] != nil }) {
            throw Self.invalid("A request object cannot carry '\(name)' (RFC 9101 §4).")
        }
        guard let jti = claims["jti"]?.stringValue, !jti.isEmpty,
            await context.state.useAssertionID("request-object " + jti, client: clientID, until: Date(timeIntervalSince1970: expiry))
        else { throw Self.invalid("The request object has no jti, or was used before.") }

        var parameters = [OAuthParameter("client_id", clientID)]
        for (name, value) in claims.sorted(by: { $0.key < $1.key }) where !["iss", "aud", "exp", "nbf", "iat", "jti", "client_id"].contains(name) {
            switch value {
            case .string(let text): parameters.append(OAuthParameter(name, text))
            case .number(let number):
                guard let whole = Int64(exactly: number) else { throw Self.invalid("The request object's '\(name)' must be a whole number.") }
                parameters.append(OAuthParameter(name, String(whole)))
            case .object, .array:
                // claims (OIDC Core §5.5), authorization_details (RFC 9396): kept as the JSON they are.
                parameters.append(OAuthParameter(name, value.jsonText))
            default: throw Self.invalid("The request object's '\(name)' must be a string, a number, an object or an array.")
            }
        }
        return parameters
    }

    static func invalid(_ description: String) -> OAuthError { OAuthError(code: "invalid_request_object", description: description) }
}
