/// `application/x-www-form-urlencoded` bodies (RFC 6749 Appendix B): the library's own plumbing,
/// public by mistake.
@available(*, deprecated, message: "FormEncoding is internal plumbing and will be removed; use Foundation's URLComponents (queryItems, percentEncodedQuery)")
public enum FormEncoding {
    /// Encodes the pairs in order: `Hej Världen` becomes `Hej+V%C3%A4rlden`.
    public static func encode(_ parameters: [OAuthParameter]) -> String { FormURLEncoding.encode(parameters) }

    /// Encodes one value as a form body would.
    public static func encode(value: String) -> String { FormURLEncoding.encode(value: value) }

    /// Decodes a form body or a URL query into its pairs, in order.
    ///
    /// - Throws: ``OIDCError/Code/malformedURL`` for a broken escape or invalid UTF-8,
    ///   ``OIDCError/Code/duplicateParameter`` for a repeated name unless `allowDuplicates`.
    public static func decode(_ text: Substring, allowDuplicates: Bool = false) throws(OIDCError) -> [OAuthParameter] {
        try FormURLEncoding.decode(text, allowDuplicates: allowDuplicates)
    }

    /// Decodes a form body or a URL query into its pairs, in order.
    ///
    /// - Throws: as the `Substring` form does.
    public static func decode(_ text: String, allowDuplicates: Bool = false) throws(OIDCError) -> [OAuthParameter] {
        try FormURLEncoding.decode(text, allowDuplicates: allowDuplicates)
    }
}
