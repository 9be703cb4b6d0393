import Foundation

/// A resource's own reason for refusing a token (RFC 6750 §3): its challenge's `error`, and the
/// `error_description` of the challenge, else of a small JSON body (where many servers put it),
/// short and with control characters as `?`: `invalid_token ("The access token expired.")`.
package enum RefusalReason {
    /// The reason of a 401 or 403 whose `Bearer` or `DPoP` challenge carries an `error`; `nil` otherwise.
    package static func text(of response: HTTPResponse) -> String? {
        guard let challenge = ResourceChallenge(response), let error = challenge.error, !error.isEmpty else { return nil }
        var text = UntrustedText.sanitized(error, limit: 64)
        if let description = (challenge.errorDescription ?? bodyDescription(of: response)).map({ UntrustedText.sanitized($0, limit: 200) }),
           !description.isEmpty {
            text += " (\"\(description)\")"
        }
        return text
    }

    /// `error_description` of a JSON object body of at most 8 KiB.
    private static func bodyDescription(of response: HTTPResponse) -> String? {
        guard !response.body.isEmpty, response.body.count <= 8192,
              let object = try? JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any] else { return nil }
        return object["error_description"] as? String
    }
}
