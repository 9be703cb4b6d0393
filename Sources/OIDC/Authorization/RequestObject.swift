public import Foundation

/// Signed request objects (RFC 9101, JAR): a login's parameters as the claims of a JWT the client
/// signs, sent by value (`request`) or through a pushed authorization request, so that the
/// provider knows they come from the client unchanged.
extension AuthorizationRequest {
    /// The `typ` of a request object (RFC 9101 §10.8).
    package static let requestObjectType = "oauth-authz-req+jwt"

    /// Parameters whose value is JSON, written as JSON inside a request object: OIDC Core §5.5's
    /// `claims` (an object) and RFC 9396's `authorization_details` (an array).
    package static let jsonValuedNames: Set<String> = ["claims", "authorization_details"]

    /// Names a request object sets itself, or must not carry (RFC 9101 §4): an additional
    /// parameter cannot use them.
    package static let reservedRequestObjectNames: Set<String> = ["iss", "aud", "iat", "nbf", "exp", "jti", "request", "request_uri"]

    /// This request as a signed request object (RFC 9101 §4): every parameter it sends
    /// as a claim (`max_age` a number, `claims` and `authorization_details` JSON, the others
    /// strings), with `iss` the client id, `aud`
    /// `audience` (the provider's issuer), `iat` and `nbf` now, `exp` `lifetime` later and a random
    /// `jti`; the header's `typ` is `oauth-authz-req+jwt`, its `kid` the key's.
    ///
    /// - Parameters:
    ///   - key: the client's private key, whose public key the provider has (its registered JWKS).
    ///   - audience: the provider's issuer identifier.
    ///   - lifetime: how long the object is good for: 60 s by default, held to 10 s ... 1 hour
    ///     (FAPI 2.0 allows at most 60 minutes between `nbf` and `exp`).
    ///   - now: the time it is signed at.
    /// - Throws: what building its parameters throws; ``OIDCError/Code/reservedParameter`` for an
    ///   additional parameter named `iss`, `aud`, `iat`, `nbf`, `exp`, `jti`, `request` or `request_uri`;
    ///   ``OIDCError/Code/invalidArgument`` for a `claims` or `authorization_details` that is not
    ///   JSON; ``OIDCError/Code/randomFailure``; what ``JWSSigningKey/sign(claims:type:extraHeader:)`` throws.
    public func requestObject(signedWith key: JWSSigningKey, audience: String, lifetime: Duration = .seconds(60), now: Date = Date()) throws(OIDCError)
        -> String
    {
        var claims: [String: JSONValue] = [:]
        for parameter in try parameters() {
            if Self.reservedRequestObjectNames.contains(parameter.name) {
                throw OIDCError(
                    .reservedParameter, "A request object sets '\(parameter.name)' itself, or cannot carry it (RFC 9101 §4); remove it from the additional parameters.",
                    context: ["parameter": parameter.name]
                )
            }
            if parameter.name == "max_age", let seconds = Double(parameter.value) {
                claims[parameter.name] = .number(seconds)
            } else if Self.jsonValuedNames.contains(parameter.name) {
                do { claims[parameter.name] = try StrictJSONParser.parse(Array(parameter.value.utf8)) } catch {
                    throw OIDCError(.invalidArgument, "The '\(parameter.name)' parameter is not valid JSON (\(error)).", context: ["parameter": parameter.name])
                }
            } else {
                claims[parameter.name] = .string(parameter.value)
            }
        }
        try Self.stampRequestClaims(&claims, clientID: clientID, audience: audience, lifetime: min(max(lifetime, .seconds(10)), .seconds(3600)), now: now)
        return try key.sign(claims: claims, type: Self.requestObjectType)
    }

    /// The claims that make a signed request the client's own, now: `iss` the client, `aud` the
    /// provider's issuer, `iat` and `nbf` now, `exp` `lifetime` later, a random `jti` (RFC 9101
    /// §4, CIBA Core §7.1.1).
    package static func stampRequestClaims(
        _ claims: inout [String: JSONValue], clientID: String, audience: String, lifetime: Duration, now: Date
    ) throws(OIDCError) {
        let issuedAt = now.timeIntervalSince1970.rounded(.down)
        claims["iss"] = .string(clientID)
        claims["aud"] = .string(audience)
        claims["iat"] = .number(issuedAt)
        claims["nbf"] = .number(issuedAt)
        claims["exp"] = .number(issuedAt + lifetime.timeInterval.rounded(.down))
        claims["jti"] = .string(try RandomToken.generate())
    }

    /// The URL that sends the browser to the authorization endpoint with a request object by value
    /// (RFC 9101 §5.1): only `client_id` and `request`.
    ///
    /// - Throws: ``OIDCError/Code/invalidArgument`` for an empty client id or request object; as
    ///   ``url()`` for the endpoint.
    public func url(requestObject: String) throws(OIDCError) -> URL {
        try EndpointURLPolicy.validate(authorizationEndpoint, role: "authorization endpoint")
        guard !clientID.isEmpty else { throw .invalidArgument("The client id is empty.") }
        guard !requestObject.isEmpty else { throw .invalidArgument("The request object is empty.") }
        return try Self.assemble(authorizationEndpoint, [.init("client_id", clientID), .init("request", requestObject)])
    }
}
