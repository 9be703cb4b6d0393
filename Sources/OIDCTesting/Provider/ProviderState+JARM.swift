internal import Foundation
internal import OIDC

extension ProviderState {
    /// The query of a signed authorization response (JARM §2.1): only `response`, a JWT signed
    /// with the ID-token key whose claims are `parameters` (the plain response's, `iss` among them
    /// when the provider sends it) with `iss`, `aud` (`clientID`) and `exp` (5 minutes); or what
    /// the configured ``TestProvider/SignedResponseFault`` sends instead.
    func signedResponse(_ parameters: [OAuthParameter], clientID: String) throws -> [OAuthParameter] {
        let fault = configuration.signedResponseFault
        switch fault {
        case .plainCode?: return parameters
        case .noResponse?: return []
        case .encrypted?: return [OAuthParameter("response", try Self.jweShaped())]
        default: break
        }
        var claims: [String: Any] = [:]
        for parameter in parameters { claims[parameter.name] = parameter.value }
        let now = Int(self.now.timeIntervalSince1970)
        claims["iss"] = fault == .wrongIssuer ? issuer + "/other" : issuer
        claims["aud"] = fault == .wrongAudience ? "another-client" : clientID
        claims["exp"] = fault == .expired ? now - 600 : now + 300
        claims["iat"] = now
        var key = keys.signingKey(configuration.idTokenAlgorithm)
        if fault == .unknownKey {
            key = try TestSigningKey.generate(key.algorithm, keyID: "unpublished-\(try Self.randomToken())")
        }
        var response = try key.sign(claims: claims)
        if fault == .badSignature {
            claims["code"] = "forged"
            let forged = try key.sign(claims: claims).split(separator: ".")
            let parts = response.split(separator: ".")
            response = [parts[0], forged[1], parts[2]].joined(separator: ".")
        }
        return [OAuthParameter("response", response)]
    }

    /// Five base64url parts, the first a JWE header: what an encrypted response looks like.
    private static func jweShaped() throws -> String {
        let header = Base64URLEncoding.encode(Array(#"{"alg":"RSA-OAEP-256","enc":"A256GCM"}"#.utf8))
        var parts = [header]
        for count in [256, 12, 64, 16] { parts.append(Base64URLEncoding.encode(try LibCrypto.randomBytes(count: count))) }
        return parts.joined(separator: ".")
    }
}
