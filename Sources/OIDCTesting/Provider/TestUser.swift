internal import Foundation
public import OIDC

/// The user the test provider signs in: its claims go into ID tokens and userinfo answers.
public struct TestUser: Sendable, Equatable {
    /// `sub`: the stable identifier of the user at this provider.
    public var subject: String
    /// `name`, when set.
    public var name: String?
    /// `email`, when set.
    public var email: String?
    /// `email_verified`, when set.
    public var emailVerified: Bool?
    /// `amr`: how the user authenticated, such as `["pwd", "otp"]` (RFC 8176).
    public var amr: [String]?
    /// `acr`: the authentication context class reached.
    public var acr: String?
    /// More claims for ID tokens and userinfo, such as `preferred_username` or `locale`.
    /// They do not override the registered claims (`iss`, `sub`, `aud`, `exp`, …).
    public var extraClaims: [String: JSONValue]

    /// A user; only the subject is required.
    public init(
        subject: String,
        name: String? = nil,
        email: String? = nil,
        emailVerified: Bool? = nil,
        amr: [String]? = nil,
        acr: String? = nil,
        extraClaims: [String: JSONValue] = [:]
    ) {
        self.subject = subject
        self.name = name
        self.email = email
        self.emailVerified = emailVerified
        self.amr = amr
        self.acr = acr
        self.extraClaims = extraClaims
    }

    /// `test-user`, "Test User", `test.user@example.com` (verified), `amr: ["pwd"]`.
    public static let `default` = TestUser(
        subject: "test-user", name: "Test User", email: "test.user@example.com", emailVerified: true, amr: ["pwd"]
    )

    /// The profile claims for userinfo and ID tokens, without the registered ones.
    var profileClaims: [String: Any] {
        var claims: [String: Any] = [:]
        for (name, value) in extraClaims { claims[name] = value.foundationValue }
        if let name { claims["name"] = name }
        if let email { claims["email"] = email }
        if let emailVerified { claims["email_verified"] = emailVerified }
        claims["sub"] = subject
        return claims
    }
}

extension JSONValue {
    /// The value as `JSONSerialization` writes it.
    package var foundationValue: Any {
        switch self {
        case .null: NSNull()
        case .bool(let value): value
        case .number(let value): value.rounded() == value && abs(value) < 9e15 ? Int(value) as Any : value as Any
        case .string(let value): value
        case .array(let values): values.map(\.foundationValue)
        case .object(let members): members.mapValues(\.foundationValue)
        }
    }
}
