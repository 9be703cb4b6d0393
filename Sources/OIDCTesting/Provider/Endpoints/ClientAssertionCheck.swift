internal import Foundation
internal import OIDC

/// A client assertion (RFC 7523 §3) checked as a careful server does: the jwt-bearer type, a
/// compact JWS by the client's registered key (the secret's HMAC for `client_secret_jwt`, a key of
/// its JWKS for `private_key_jwt`), `iss` = `sub` = a registered client, an accepted `aud`, an `exp`
/// in the future and at most an hour away, and a `jti` never seen before.
enum ClientAssertionCheck {
    static let type = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"

    static func authenticate(
        _ assertion: String, type: String?, bodyID: String?, _ request: ProviderRequest, _ context: ProviderContext
    ) async throws(OAuthError) -> TestProvider.Client {
        guard type == Self.type else { throw .invalidClient("client_assertion_type must be \(Self.type).") }
        let jws: ParsedJWS
        let claims: [String: JSONValue]
        do {
            jws = try ParsedJWS(assertion)
            claims = try StrictJSONParser.parseObject(jws.payload)
        } catch {
            throw .invalidClient("The client assertion is not a well-formed JWS.")
        }
        guard let issuer = claims["iss"]?.stringValue, claims["sub"]?.stringValue == issuer else {
            throw .invalidClient("The client assertion's iss and sub must both be the client id.")
        }
        if let bodyID, bodyID != issuer { throw .invalidClient("client_id differs from the assertion's iss.") }
        let client = try ClientAuthenticator.registered(issuer, context)
        try verifySignature(jws, of: client, requiresKeyID: context.configuration.requiresKeyID)
        try checkAudience(claims["aud"], request, context)
        let now = await context.state.now
        guard let expiry = claims["exp"]?.numberValue, expiry > now.timeIntervalSince1970 else {
            throw .invalidClient("The client assertion has expired, or has no exp.")
        }
        guard expiry <= now.timeIntervalSince1970 + 3600 else { throw .invalidClient("The client assertion's exp is more than an hour away.") }
        if let issuedAt = claims["iat"]?.numberValue, issuedAt > now.timeIntervalSince1970 + 60 {
            throw .invalidClient("The client assertion's iat is in the future.")
        }
        guard let jti = claims["jti"]?.stringValue, !jti.isEmpty else { throw .invalidClient("The client assertion has no jti.") }
        guard await context.state.useAssertionID(jti, client: client.id, until: Date(timeIntervalSince1970: expiry)) else {
            throw .invalidClient("The client assertion's jti was used before: an assertion is good for one request.")
        }
        return client
    }

    private static func verifySignature(_ jws: ParsedJWS, of client: TestProvider.Client, requiresKeyID: Bool) throws(OAuthError) {
        do throws(OIDCError) {
            switch client.authentication {
            case .clientSecretJWT:
                guard jws.algorithm.isHMACAlgorithm, let secret = client.secret else { throw OIDCError(.algorithmNotAllowed, "HMAC expected") }
                try jws.verifySignature(with: JWK(hmacSecret: secret))
            case .privateKeyJWT:
                guard let jwks = client.jwks else { throw OIDCError(.algorithmNotAllowed, "a private key expected") }
                try verify(jws, withKeysOf: jwks, requiresKeyID: requiresKeyID)
            default:
                throw OIDCError(.invalidArgument, "not registered for assertions")
            }
        } catch {
            throw .invalidClient("The client assertion does not verify for this client (\(client.authentication.rawValue)): \(error.code).")
        }
    }

    /// Checks `jws` against a key of a client's registered JWKS: an asymmetric algorithm only (never
    /// `none` or an HMAC), the key its `kid` and algorithm select; with `requiresKeyID`, a JWS
    /// without `kid` is refused (``TestProvider/Configuration/requiresKeyID``).
    static func verify(_ jws: ParsedJWS, withKeysOf jwks: String, requiresKeyID: Bool = false) throws(OIDCError) {
        guard !jws.algorithm.isHMACAlgorithm else { throw OIDCError(.algorithmNotAllowed, "a private key expected") }
        if requiresKeyID, jws.keyID == nil { throw OIDCError(.keyNotFound, "no kid: this provider looks the client's keys up by kid") }
        try jws.verifySignature(with: try JWKSet(json: Array(jwks.utf8), allowsSymmetricKeys: false).key(for: jws.algorithm, keyID: jws.keyID))
    }

    /// A JWT's `aud`, a string or an array of strings, as a list.
    static func audiences(_ value: JSONValue?) -> [String] {
        value?.stringValue.map { [$0] } ?? value?.arrayValue?.compactMap(\.stringValue) ?? []
    }

    /// `aud` (a string, or an array) must hold what the provider accepts: its issuer, or the URL of
    /// the endpoint the assertion came to.
    private static func checkAudience(_ value: JSONValue?, _ request: ProviderRequest, _ context: ProviderContext) throws(OAuthError) {
        let audiences = audiences(value)
        let origin = String(context.issuer.dropLast(context.configuration.issuerPath.count))
        let endpoint = origin + request.path
        // RFC 9126 §2: the pushed authorization request endpoint also takes the token endpoint's URL.
        let alsoToken = request.path.hasSuffix(ProviderPaths.pushedAuthorization) ? [context.issuer + ProviderPaths.token] : []
        let accepted: Set<String> = switch context.configuration.assertionAudience {
        case .issuerOrEndpoint: Set([context.issuer, endpoint] + alsoToken)
        case .issuer: [context.issuer]
        case .endpoint: [endpoint]
        }
        guard audiences.contains(where: accepted.contains) else {
            throw .invalidClient("The client assertion's aud is not one this provider accepts (\(accepted.sorted().joined(separator: " or "))).")
        }
    }
}
