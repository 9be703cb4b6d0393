internal import Foundation
internal import OIDC

/// `authorization_details` (RFC 9396) on an authorization or token request, checked as a careful
/// server does: a JSON array of objects each with a string `type`, at most 64 KiB, every type one
/// the provider takes (``TestProvider/Configuration/authorizationDetailsTypes``). A refusal is
/// `invalid_authorization_details` (§5).
enum AuthorizationDetailsCheck {
    static let errorCode = "invalid_authorization_details"

    /// The details of `text`, `nil` when none were sent.
    static func check(_ text: String?, _ configuration: TestProvider.Configuration) throws(OAuthError) -> AuthorizationDetails? {
        guard let text else { return nil }
        let details: AuthorizationDetails
        do { details = try AuthorizationDetails(json: text) } catch {
            throw OAuthError(code: errorCode, description: error.message)
        }
        if let accepted = configuration.authorizationDetailsTypes, let unknown = details.types.first(where: { !accepted.contains($0) }) {
            throw OAuthError(code: errorCode, description: "The authorization_details type '\(unknown)' is not one this provider takes.")
        }
        return details
    }

    /// `details` as the Foundation value a JSON answer embeds.
    static func foundationValue(_ details: AuthorizationDetails) -> Any? {
        try? JSONSerialization.jsonObject(with: Data(details.jsonText.utf8))
    }
}
