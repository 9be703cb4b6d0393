import Foundation
import JWTKit

/// What an API written with jwt-kit 5 does by hand for an RFC 9068 access token: jwt-kit checks
/// the signature with the key the `kid` names and decodes the payload; the rest is the developer's
/// (typ, iss, aud, exp/nbf/iat with leeway, the required claims, the scope), as here.
struct JWTKitVerifier: Sendable {
    let keys: JWTKeyCollection
    let issuer: String
    let audience: String
    let leeway: TimeInterval
    let now: Date

    struct Refused: Error, CustomStringConvertible {
        let description: String
    }

    /// The claims RFC 9068 §2.2 requires, as jwt-kit's claim types, and the scope.
    struct AccessTokenPayload: JWTPayload {
        let iss: IssuerClaim
        let sub: SubjectClaim
        let aud: AudienceClaim
        let exp: ExpirationClaim
        let nbf: NotBeforeClaim?
        let iat: IssuedAtClaim
        let jti: IDClaim
        let client_id: String
        let scope: String?

        // The checks need the resource's settings: `verified(_:)` below runs them.
        func verify(using _: some JWTAlgorithm) async throws {}
    }

    struct Header: Decodable {
        let typ: String?
    }

    /// The subject and scopes of the bearer token in `authorization`, if it grants `scopes`.
    func verify(authorization: String, requiring scopes: Set<String>) async throws -> (subject: String, scopes: Set<String>) {
        guard authorization.hasPrefix("Bearer ") else { throw Refused(description: "not a bearer token") }
        let token = String(authorization.dropFirst(7))
        // RFC 9068 §4: typ at+jwt; jwt-kit does not look at it, so the header is decoded here.
        guard let typ = try Self.header(of: token).typ?.lowercased(), typ == "at+jwt" || typ == "application/at+jwt" else {
            throw Refused(description: "typ")
        }
        let payload = try await keys.verify(token, as: AccessTokenPayload.self)
        guard payload.iss.value == issuer else { throw JWTError.claimVerificationFailure(failedClaim: payload.iss, reason: "issuer") }
        try payload.aud.verifyIntendedAudience(includes: audience)
        try payload.exp.verifyNotExpired(currentDate: now.addingTimeInterval(-leeway))
        try payload.nbf?.verifyNotBefore(currentDate: now.addingTimeInterval(leeway))
        guard payload.iat.value <= now.addingTimeInterval(leeway) else {
            throw JWTError.claimVerificationFailure(failedClaim: payload.iat, reason: "issued in the future")
        }
        let granted = Set((payload.scope ?? "").split(separator: " ").map(String.init))
        guard scopes.isSubset(of: granted) else { throw Refused(description: "insufficient scope") }
        return (payload.sub.value, granted)
    }

    static func header(of token: String) throws -> Header {
        var text = token.prefix { $0 != "." }.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        text += String(repeating: "=", count: (4 - text.count % 4) % 4)
        guard let data = Data(base64Encoded: text) else { throw Refused(description: "header") }
        return try JSONDecoder().decode(Header.self, from: data)
    }
}
