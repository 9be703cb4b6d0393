internal import Foundation

/// Step-up by authentication strength (RFC 9470): a resource's 401 whose `Bearer` (or `DPoP`)
/// challenge says `error="insufficient_user_authentication"` wants a new login, stronger (`acr_values`)
/// or more recent (`max_age`). A refresh would not help (refreshed tokens keep the old
/// authentication) and would spend the refresh token: the session stops there, with an error that
/// names what the new login must ask for.
enum StepUpAuthentication {
    /// The error for `response` from `url`, when it is such a 401; `nil` otherwise.
    static func error(_ response: HTTPResponse, from url: URL) -> OIDCError? {
        guard response.status == 401 else { return nil }
        for field in response.headers.values("WWW-Authenticate").prefix(16) {
            for challenge in AuthenticationChallenge.parse(field)
            where ["bearer", "dpop"].contains(challenge.scheme.lowercased()) && challenge.parameters["error"] == "insufficient_user_authentication" {
                let acr = challenge.parameters["acr_values"].map { UntrustedText.sanitized($0, limit: 256) }.flatMap { $0.isEmpty ? nil : $0 }
                let maxAge = challenge.parameters["max_age"].flatMap { Int($0) }.flatMap { $0 >= 0 ? $0 : nil }
                var context = ["status": "401", "rule": "RFC 9470 insufficient_user_authentication", "url": HTTPErrorMapping.describe(url)]
                context["acr_values"] = acr
                context["max_age"] = maxAge.map(String.init)
                let asked = [acr.map { "acr_values '\($0)'" }, maxAge.map { "max_age \($0) s" }].compactMap { $0 }
                let named = asked.isEmpty ? "it names no acr_values or max_age" : "it asks for " + asked.joined(separator: " and ")
                return OIDCError(
                    .insufficientUserAuthentication,
                    "The resource at \(HTTPErrorMapping.describe(url)) needs a stronger or more recent login (401 insufficient_user_authentication; \(named)); log in again asking for them. The token was not refreshed: a refresh keeps the old authentication.",
                    context: context
                ).requiring(acrValues: acr.map { $0.split(separator: " ").map(String.init) }, maxAge: maxAge)
            }
        }
        return nil
    }
}
