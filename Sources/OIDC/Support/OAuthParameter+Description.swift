internal import Foundation

/// What a form parameter prints: never a secret. The value of a parameter that holds one (a code, a
/// verifier, a refresh token, a client secret or assertion, a device code, a token to revoke or
/// exchange) is `<redacted>`. So a ``ProviderRequest`` a stage of yours prints or dumps shows its
/// form this way, its headers as `HTTPHeaders` prints them (credentials redacted) and its tokens as
/// `Secret` does; `print`, `String(describing:)`, `String(reflecting:)` and `dump` all show this.
extension OAuthParameter: CustomStringConvertible, CustomReflectable {
    /// `name=value`, or `name=<redacted>` for a parameter that holds a secret (`code`,
    /// `code_verifier`, `refresh_token`, `client_secret`, `client_assertion`, `device_code`, …).
    public var description: String {
        "\(name)=\(TokenClient.secretParameters.contains(name) ? "<redacted>" : value)"
    }

    /// The ``description`` alone, so that `dump` shows no secret either.
    public var customMirror: Mirror { Mirror(self, children: ["parameter": description], displayStyle: .struct) }
}
