internal import Foundation
internal import OIDC

extension TestProvider {
    /// Signs `claims` as a JWT with the provider's current key (the RSA one for
    /// ``IDTokenAlgorithm/rs256``, the EC one for ``IDTokenAlgorithm/es256``), whose public half
    /// the provider serves at ``jwksURI``: for resource-server tests that need tokens the provider's
    /// published keys verify. The header is `alg`, `kid`, `typ` (when not `nil`) and `extraHeader`.
    public func signJWT(
        claims: [String: Any], type: String? = "at+jwt", algorithm: IDTokenAlgorithm? = nil, extraHeader: [String: Any] = [:]
    ) async throws -> String {
        let key = await state.keys.signingKey(algorithm ?? configuration.idTokenAlgorithm)
        if let type {
            return try key.sign(claims: claims, extraHeader: ["typ": type].merging(extraHeader) { _, new in new })
        }
        // TestSigningKey always writes a typ: an untyped token is written by hand.
        var header: [String: Any] = ["alg": key.algorithm.rawValue]
        if let keyID = key.keyID { header["kid"] = keyID }
        header.merge(extraHeader) { _, new in new }
        let headerJSON = String(decoding: try JSONSerialization.data(withJSONObject: header, options: [.sortedKeys]), as: UTF8.self)
        let payloadJSON = String(decoding: try JSONSerialization.data(withJSONObject: claims, options: [.sortedKeys, .withoutEscapingSlashes]), as: UTF8.self)
        return try key.sign(headerJSON: headerJSON, payloadJSON: payloadJSON)
    }

    /// An RFC 9068 JWT access token (`typ` `at+jwt`) for the current user, signed with the
    /// provider's current key: `iss`, `sub`, `aud`, `client_id`, `scope`, `iat`, `exp` (by the
    /// provider's clock, ``Configuration/accessTokenLifetime`` from now), a random `jti`, and `cnf`
    /// when bound to a DPoP key (`jkt`) or a client certificate (`x5t#S256`); `extraClaims` are
    /// added last (and replace any of these).
    public func issueJWTAccessToken(
        audience: String, clientID: String = Client.default.id, scope: String = "openid", dpopKeyThumbprint: String? = nil,
        certificateThumbprint: String? = nil, extraClaims: [String: Any] = [:]
    ) async throws -> String {
        let now = Int(await state.now.timeIntervalSince1970)
        var claims: [String: Any] = [
            "iss": issuer, "sub": await state.user.subject, "aud": audience, "client_id": clientID, "scope": scope, "iat": now,
            "exp": now + configuration.accessTokenLifetime,
            "jti": Base64URLEncoding.encode(try LibCrypto.randomBytes(count: 16)),
        ]
        var confirmation: [String: Any] = [:]
        if let dpopKeyThumbprint { confirmation["jkt"] = dpopKeyThumbprint }
        if let certificateThumbprint { confirmation["x5t#S256"] = certificateThumbprint }
        if !confirmation.isEmpty { claims["cnf"] = confirmation }
        claims.merge(extraClaims) { _, new in new }
        return try await signJWT(claims: claims)
    }
}
