internal import Foundation

/// The `aud` claim (RFC 7519 §4.1.3), read one way for every token the kit reads: ID tokens, JARM
/// responses, access tokens, logout tokens and introspection answers. It is a string, or a
/// non-empty array of strings; anything else (a number, an empty array, an array with a
/// non-string) is refused, never filtered down to what looks usable.
package enum Audience {
    /// The rule, in the words of the errors: "must be a string or a non-empty array of strings".
    package static let rule = "must be a string or a non-empty array of strings"

    /// A claim value that breaks ``rule``.
    package struct Malformed: Error {}

    /// The audience values of `value`; `nil` when the claim is absent (or JSON `null`).
    ///
    /// - Throws: ``Malformed`` for any other value than a string or a non-empty array of strings.
    package static func values(_ value: JSONValue?) throws(Malformed) -> [String]? {
        switch value {
        case nil, .null?: return nil
        case .string(let one)?: return [one]
        case .array(let list)? where !list.isEmpty:
            var result: [String] = []
            result.reserveCapacity(list.count)
            for element in list {
                guard case .string(let text) = element else { throw Malformed() }
                result.append(text)
            }
            return result
        default: throw Malformed()
        }
    }
}
