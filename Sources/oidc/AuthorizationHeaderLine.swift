import OIDC

/// `oidc token --output header`: the one line a header helper command prints for its host to send,
/// `Authorization: Bearer TOKEN` (RFC 6750 §2.1), or `Authorization: DPoP TOKEN` for a DPoP-bound
/// login (RFC 9449 §7.1).
///
/// A DPoP-bound token is good only with a proof made for each request (its method, its URL, a fresh
/// `jti`), which a helper that runs once and whose line is sent with many requests cannot make:
/// the line is still printed (a script pairs it with `oidc proof`, which makes the proof), and a
/// note on stderr says that the `DPoP` header is needed too, so that the API's refusal of a
/// proofless request is not a mystery.
enum AuthorizationHeaderLine {
    /// Prints the line on stdout and, for a DPoP-bound login, the note on stderr.
    ///
    /// - Throws: ``OIDCError/Code/malformedToken`` (exit 4) when the access token holds a character
    ///   that cannot stand in a header line (a space or a control: an injected or edited store;
    ///   RFC 6750's `b64token` is visible ASCII), naming the character's code, never the token.
    static func emit(_ login: StoredLogin, profile: String) throws {
        let line = try line(for: login, profile: profile)
        Console.output(line)
        if login.isDPoPBound {
            Console.error(
                "oidc: note: the token of profile '\(profile)' is DPoP-bound: each request also needs a DPoP header with a proof made for that request (oidc proof --profile \(profile) --method M --url U); an API refuses the Authorization header alone."
            )
        }
    }

    /// `Authorization: SCHEME TOKEN`, the scheme `DPoP` for a DPoP-bound login and `Bearer` otherwise
    /// (whatever case the provider wrote `token_type` in).
    static func line(for login: StoredLogin, profile: String) throws(OIDCError) -> String {
        let token = login.tokens.accessToken.revealedValue
        if token.isEmpty {
            throw OIDCError(.malformedToken, "The login of profile '\(profile)' holds an empty access token; log in again.", context: ["profile": profile])
        }
        if let bad = token.unicodeScalars.first(where: { $0.value <= 0x20 || $0.value >= 0x7F }) {
            let code = String(bad.value, radix: 16, uppercase: true)
            throw OIDCError(
                .malformedToken,
                "The access token of profile '\(profile)' holds U+\(String(repeating: "0", count: max(0, 4 - code.count)) + code), which cannot stand in an Authorization header line (RFC 6750 §2.1: visible ASCII only); nothing was printed. Log in again.",
                context: ["profile": profile]
            )
        }
        return "Authorization: \(login.isDPoPBound ? "DPoP" : "Bearer") \(token)"
    }
}
