import Foundation

/// The dates `oidc` prints and compares, held to the years 1 to 9999 that the ID-token verifier
/// accepts (`IDTokenClaims`: at most 253402300799 s from 1970 either way). A stored login holds
/// whatever `oidc inject` or an editor put there: an `exp` of 1e300, or an `expires_at` past what a
/// 64-bit integer holds, must not trap a conversion in `oidc status`, `oidc token` or kubectl's
/// credential (review 3, L6). A date outside is read as the nearer end: one far in the past has
/// expired, one far in the future has not.
enum DateRange {
    /// 0001-01-01T00:00:00Z.
    static let earliest: TimeInterval = -62_135_596_800
    /// 9999-12-31T23:59:59Z.
    static let latest: TimeInterval = 253_402_300_799

    /// `seconds` since 1970 moved into the range; NaN (which JSON cannot carry) counts as the earliest.
    static func clamped(_ seconds: TimeInterval) -> TimeInterval {
        guard !seconds.isNaN else { return earliest }
        return min(max(seconds, earliest), latest)
    }

    /// `date` moved into the range.
    static func clamped(_ date: Date) -> Date {
        Date(timeIntervalSince1970: clamped(date.timeIntervalSince1970))
    }

    /// Whole seconds since 1970, rounded down, for JSON: never beyond what `Int64` holds.
    static func unixSeconds(_ date: Date) -> Int64 {
        Int64(clamped(date.timeIntervalSince1970).rounded(.down))
    }
}
