package import Foundation

/// RFC 9110 §5.6.7 IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`), by arithmetic on the Unix time:
/// a `DateFormatter` made per response cost the provider 12 % of its time under load (a profile:
/// ICU's locale and pattern set-up), and one shared is not thread-safe.
package enum HTTPDate {
    private static let days = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"]  // 1970-01-01 was a Thursday
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    package static func format(_ date: Date) -> String {
        let seconds = Int64(date.timeIntervalSince1970.rounded(.down))
        let day = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let time = seconds - day * 86_400
        let (year, month, dayOfMonth) = civil(fromDays: day)
        let weekday = Int(((day % 7) + 7) % 7)
        return "\(days[weekday]), \(two(dayOfMonth)) \(months[month - 1]) \(year) \(two(Int(time / 3600))):\(two(Int(time / 60 % 60))):\(two(Int(time % 60))) GMT"
    }

    private static func two(_ value: Int) -> String { value < 10 ? "0\(value)" : String(value) }

    /// Year, month (1–12) and day (1–31) of a count of days since 1970-01-01 (proleptic Gregorian;
    /// H. Hinnant's `civil_from_days`).
    private static func civil(fromDays days: Int64) -> (Int64, Int, Int) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthPrime = (5 * dayOfYear + 2) / 153
        let day = Int(dayOfYear - (153 * monthPrime + 2) / 5 + 1)
        let month = Int(monthPrime < 10 ? monthPrime + 3 : monthPrime - 9)
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}
