internal import Foundation

/// What a provider request prints, for a stage of yours that logs or prints it: never a secret. The
/// values of the form parameters that hold one (a code, a verifier, a refresh token, a client
/// secret or assertion, a device code, a token to revoke or exchange) are `<redacted>`, the headers
/// as `HTTPHeaders` prints them, the URL without query. `print`, `String(describing:)`,
/// `String(reflecting:)` and `dump` all show this.
extension ProviderRequest: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// `refresh POST https://idp.example/token [grant_type=refresh_token, refresh_token=<redacted>] [Accept: application/json]`.
    public var description: String {
        "\(call) \(method) \(HTTPErrorMapping.describe(url)) \(form.description) \(headers)"
    }

    /// The same as ``description``.
    public var debugDescription: String { description }

    /// The ``description`` alone, so that `dump` shows no secret either.
    public var customMirror: Mirror { Mirror(self, children: ["request": description], displayStyle: .struct) }
}

extension OAuthParameter: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// `name=value`, or `name=<redacted>` for a parameter that holds a secret (`code`,
    /// `code_verifier`, `refresh_token`, `client_secret`, `client_assertion`, `device_code`, …).
    public var description: String {
        "\(name)=\(TokenClient.secretParameters.contains(name) ? "<redacted>" : value)"
    }

    /// The same as ``description``.
    public var debugDescription: String { description }

    /// The ``description`` alone, so that `dump` shows no secret either.
    public var customMirror: Mirror { Mirror(self, children: ["parameter": description], displayStyle: .struct) }
}
