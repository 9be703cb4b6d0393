internal import Foundation
internal import OIDC

/// How strong, and how recent, the user's authentication behind an access token must be for a
/// route (RFC 9470, OAuth 2.0 Step Up Authentication Challenge). A token that falls short is
/// refused with `401` and `error="insufficient_user_authentication"`, its challenge naming what
/// would do (`acr_values`, `max_age`), so that the client asks the authorization server for a new
/// login with those values and tries again with the new token.
///
/// The token's `acr` and `auth_time` are read from the JWT's claims (RFC 9068 §2.2.1) or the
/// introspection answer's members.
///
/// ```swift
/// let access = try await server.verify(request, requiring: ["payments:write"],
///                                      authentication: AuthenticationRequirement(acrValues: ["urn:bank:sca"], maxAge: 300))
/// ```
public struct AuthenticationRequirement: Sendable, Hashable {
    /// The authentication context classes accepted: the token's `acr` must be one of them. Empty:
    /// any `acr`, or none.
    public var acrValues: [String]
    /// The most seconds since the user last authenticated (`auth_time`); a token without
    /// `auth_time` then falls short too. `nil`: any age.
    public var maxAge: Int?

    /// A requirement of one of `acrValues` (none: any) and an authentication at most `maxAge`
    /// seconds old (`nil`: any age).
    public init(acrValues: [String] = [], maxAge: Int? = nil) {
        self.acrValues = acrValues
        self.maxAge = maxAge
    }

    /// Whether the token `facts` describe meets this requirement at `now`; `auth_time` may be at
    /// most `leeway` seconds ahead of `now` (a later one is a broken claim, not a recent login).
    func check(_ facts: TokenFacts, now: Date, leeway: TimeInterval) throws(Denial) {
        let claims = facts.allClaims
        if !acrValues.isEmpty {
            guard case .string(let acr)? = claims["acr"], acrValues.contains(acr) else {
                throw denial("A different authentication level is required: the access token's acr is not one of acr_values.")
            }
        }
        if let maxAge {
            guard let value = claims["auth_time"] else {
                throw denial("More recent authentication is required: the access token has no auth_time.")
            }
            guard let authTime = NumericDate.seconds(value) else {
                throw .invalidToken(.invalidClaim, "The access token's auth_time \(NumericDate.rule).")
            }
            guard authTime <= now.timeIntervalSince1970 + leeway else {
                throw .invalidToken(.invalidClaim, "The access token's auth_time is in the future.")
            }
            guard now.timeIntervalSince1970 - authTime <= Double(maxAge) else {
                throw denial("More recent authentication is required: the user authenticated more than max_age seconds ago.")
            }
        }
    }

    private func denial(_ message: String) -> Denial {
        var denial = Denial(.insufficientUserAuthentication, .insufficientUserAuthentication, message)
        denial.authentication = self
        return denial
    }
}
