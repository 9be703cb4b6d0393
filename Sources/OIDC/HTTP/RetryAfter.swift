internal import Foundation

/// `Retry-After` (RFC 9110 §10.2.3): a number of seconds, or an HTTP date.
enum RetryAfter {
    /// The wait `value` asks for, from `now`: `nil` when it is neither form; never negative, at
    /// most `limit`.
    static func duration(_ value: String, now: Date, limit: Duration = .seconds(3600)) -> Duration? {
        let text = value.trimmingCharacters(in: .whitespaces)
        if let seconds = Int(text), seconds >= 0 { return min(.seconds(seconds), limit) }
        guard let date = httpDate(text) else { return nil }
        let seconds = max(0, date.timeIntervalSince(now))
        return min(.milliseconds(Int64(min(seconds, limit.timeInterval) * 1000)), limit)
    }

    /// An IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`), the form senders must use.
    private static func httpDate(_ text: String) -> Date? {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter.date(from: text)
    }
}
