/// RFC 7519 §2's NumericDate (`exp`, `iat`, `nbf`, `auth_time`), read one way for every token the
/// kit reads: ID tokens, JARM responses, access tokens, logout tokens and introspection answers.
/// A JSON number of seconds since 1970, finite and within the years 1 to 9999 (fractions allowed,
/// as the RFC allows); a string, a boolean, `NaN` or a date no provider means is refused.
package enum NumericDate {
    /// The rule, in the words of the errors.
    package static let rule = "must be a number of seconds between years 1 and 9999"

    /// The first second of the year 1 and the last of the year 9999.
    static let earliest: Double = -62_135_596_800, latest: Double = 253_402_300_799

    /// The seconds of `value`; `nil` when it breaks ``rule`` (or is absent).
    package static func seconds(_ value: JSONValue?) -> Double? {
        guard case .number(let seconds)? = value, seconds.isFinite, (earliest...latest).contains(seconds) else { return nil }
        return seconds
    }
}
