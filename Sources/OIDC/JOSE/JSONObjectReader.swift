package import Foundation

/// Typed readers of a JSON object's members, for every answer read from a provider (a token
/// response, a device authorization, a pushed authorization request's answer, an introspection
/// answer, a metadata document): one rule per kind of member, and an
/// ``OIDCError/Code/malformedResponse`` that names the document and the member, never its value.
///
/// A member whose value is `null` is as absent as a missing one: each reader returns `nil` for it.
package struct JSONObjectReader: Sendable {
    /// The object, as parsed.
    package let object: [String: JSONValue]
    /// How errors name the document: `The token response`.
    package let document: String

    /// Readers of `object`'s members; `document` names it in errors (`The token response`).
    package init(_ object: [String: JSONValue], document: String) {
        self.object = object
        self.document = document
    }

    /// The member's value; `nil` when it is absent or `null`.
    package subscript(_ name: String) -> JSONValue? {
        switch object[name] {
        case nil, .null?: nil
        case let value?: value
        }
    }

    /// The error for a member of the wrong type or value: `The token response member 'scope'
    /// must be a string.`
    package func malformed(_ name: String, _ rule: String, context: [String: String] = [:]) -> OIDCError {
        OIDCError(.malformedResponse, "\(document) member '\(name)' \(rule).", context: context)
    }

    /// A string member.
    package func string(_ name: String) throws(OIDCError) -> String? {
        switch self[name] {
        case nil: return nil
        case .string(let text)?: return text
        default: throw malformed(name, "must be a string")
        }
    }

    /// A string member that, when present, is not empty.
    package func nonEmptyString(_ name: String) throws(OIDCError) -> String? {
        guard let text = try string(name) else { return nil }
        guard !text.isEmpty else { throw malformed(name, "must be a non-empty string") }
        return text
    }

    /// An array of strings.
    package func strings(_ name: String) throws(OIDCError) -> [String]? {
        guard let value = self[name] else { return nil }
        guard let list = value.arrayValue else { throw malformed(name, "must be an array of strings") }
        var texts: [String] = []
        texts.reserveCapacity(list.count)
        for element in list {
            guard case .string(let text) = element else { throw malformed(name, "must be an array of strings") }
            texts.append(text)
        }
        return texts
    }

    /// A boolean member.
    package func bool(_ name: String) throws(OIDCError) -> Bool? {
        switch self[name] {
        case nil: return nil
        case .bool(let flag)?: return flag
        default: throw malformed(name, "must be a boolean")
        }
    }

    /// A number of seconds: the one rule for `expires_in`, `interval` and their kin (RFC 6749
    /// §5.1, RFC 8628 §3.2 and §3.5). A JSON number, or a string that holds one, spaces around it
    /// ignored: RFC 6749 writes the value as digits (Appendix A.14) without saying it is a JSON
    /// number, and deployed providers quote it (Azure AD v1's token endpoint, Google's device
    /// endpoint). It must be finite, not negative, and under 10^10 seconds (three centuries);
    /// each caller holds it to its protocol's bounds besides.
    package func seconds(_ name: String) throws(OIDCError) -> Double? {
        let seconds: Double?
        switch self[name] {
        case nil: return nil
        case .number(let number)?: seconds = number
        case .string(let text)?: seconds = Double(text.trimmingCharacters(in: .whitespaces))
        default: seconds = nil
        }
        guard let seconds, seconds.isFinite, seconds >= 0, seconds < 1e10 else { throw malformed(name, "must be a number of seconds") }
        return seconds
    }

    /// A whole number of seconds as a JSON number, at least 1: for a member its specification
    /// defines so and whose providers keep to it (RFC 9126 §2.2's `expires_in`: "a JSON number
    /// … as a positive integer"); a string or a fraction is refused.
    package func wholeSeconds(_ name: String) throws(OIDCError) -> Int? {
        switch self[name] {
        case nil: return nil
        case .number(let number)? where number.isFinite && number >= 1 && number <= Double(Int32.max) && number == number.rounded():
            return Int(number)
        default: throw malformed(name, "must be a positive whole number of seconds")
        }
    }

    /// A time as seconds since 1970 (RFC 7519's NumericDate: `exp`, `iat`, `nbf`), by the kit's one
    /// rule (``NumericDate``).
    package func date(_ name: String) throws(OIDCError) -> Date? {
        guard let value = self[name] else { return nil }
        guard let seconds = NumericDate.seconds(value) else { throw malformed(name, NumericDate.rule) }
        return Date(timeIntervalSince1970: seconds)
    }

    /// An absolute URL held to the ``EndpointURLPolicy`` (https, or plain http on a loopback host),
    /// under the role `role` (the member's name unless given).
    ///
    /// - Throws: ``OIDCError/Code/malformedResponse`` for a member that is not a string URL;
    ///   ``OIDCError/Code/insecureEndpoint`` for a plain-http URL off loopback.
    package func endpoint(_ name: String, role: String? = nil) throws(OIDCError) -> URL? {
        guard let text = try string(name) else { return nil }
        guard let url = URL(string: text), url.scheme != nil else { throw malformed(name, "is not a URL") }
        try EndpointURLPolicy.validate(url, role: role ?? name)
        return url
    }
}
