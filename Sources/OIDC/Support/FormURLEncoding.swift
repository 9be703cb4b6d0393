/// `application/x-www-form-urlencoded` bodies for token, revocation and introspection requests
/// (RFC 6749 Appendix B; WHATWG URL §5): a space becomes `+`, every byte outside `A-Z a-z 0-9 * - . _`
/// is percent-encoded from its UTF-8 form, pairs are joined with `&` in the given order.
package enum FormURLEncoding {
    /// Encodes the pairs in order: `Hej Världen` becomes `Hej+V%C3%A4rlden`.
    package static func encode(_ parameters: [OAuthParameter]) -> String {
        parameters.map {
            PercentEncoding.encode($0.name, style: .form) + "=" + PercentEncoding.encode($0.value, style: .form)
        }.joined(separator: "&")
    }

    /// Encodes one value as a form body would.
    package static func encode(value: String) -> String {
        PercentEncoding.encode(value, style: .form)
    }

    /// Decodes a form body or a URL query into its pairs, in order.
    ///
    /// - Parameters:
    ///   - text: the body or query, still encoded (`+` is a space).
    ///   - allowDuplicates: when `false` (the default), a name that appears twice is rejected:
    ///     OAuth parameters "MUST NOT be included more than once" (RFC 6749 §3.1).
    /// - Throws: ``OIDCError/Code/malformedURL`` for a broken escape or invalid UTF-8,
    ///   ``OIDCError/Code/duplicateParameter`` for a repeated name.
    package static func decode(_ text: Substring, allowDuplicates: Bool = false) throws(OIDCError) -> [OAuthParameter] {
        var result: [OAuthParameter] = []
        var seen = Set<String>()
        for pair in text.split(separator: "&", omittingEmptySubsequences: true) {
            let rawName: Substring
            let rawValue: Substring
            if let equals = pair.firstIndex(of: "=") {
                rawName = pair[..<equals]
                rawValue = pair[pair.index(after: equals)...]
            } else {
                rawName = pair
                rawValue = ""
            }
            guard let name = PercentEncoding.decode(rawName, plusIsSpace: true),
                let value = PercentEncoding.decode(rawValue, plusIsSpace: true)
            else {
                throw OIDCError(.malformedURL, "A parameter has a broken percent-encoding or is not UTF-8.")
            }
            if !allowDuplicates, !seen.insert(name).inserted {
                // The name is untrusted (anyone can send a callback): shown sanitized and bounded.
                let shown = UntrustedText.sanitized(name, limit: 64)
                throw OIDCError(
                    .duplicateParameter,
                    "The parameter '\(shown)' appears more than once; OAuth parameters must appear at most once.",
                    context: ["parameter": shown]
                )
            }
            result.append(OAuthParameter(name, value))
        }
        return result
    }

    /// Decodes a form body or a URL query into its pairs, in order.
    package static func decode(_ text: String, allowDuplicates: Bool = false) throws(OIDCError) -> [OAuthParameter] {
        try decode(text[...], allowDuplicates: allowDuplicates)
    }
}
