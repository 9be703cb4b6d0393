import Foundation
import Logging
import OIDC

/// One line per event on stderr, for a terminal and a bug report:
///
///     2026-11-23T18:50:00.123Z debug oidc.session: refreshing tokens grant_type=refresh_token issuer=https://id.example
///
/// UTC time with milliseconds, level, label, message, then the metadata sorted by key; a value with
/// a space, a quote, an `=` or nothing in it is quoted. Control characters (a line break a provider
/// put in an error code), format characters (a bidi override, a zero-width space) and the line and
/// paragraph separators U+2028/U+2029 are escaped, so one event is always one line and shows what
/// it holds.
struct StderrLogHandler: LogHandler {
    let label: String
    var logLevel: Logger.Level
    var metadata: Logger.Metadata = [:]
    var metadataProvider: Logger.MetadataProvider?

    init(label: String, logLevel: Logger.Level) {
        self.label = label
        self.logLevel = logLevel
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        var all = metadata
        if let provided = metadataProvider?.get() { all.merge(provided) { _, new in new } }
        if let own = event.metadata { all.merge(own) { _, new in new } }
        Console.error(Self.line(date: Date(), level: event.level, label: label, message: event.message.description, metadata: all))
    }

    static func line(date: Date, level: Logger.Level, label: String, message: String, metadata: Logger.Metadata) -> String {
        var line = timestamp(date) + " " + level.rawValue + " " + label + ": " + escaped(message)
        for key in metadata.keys.sorted() {
            guard let value = metadata[key] else { continue }
            line += " " + escaped(key) + "=" + quoted(render(value))
        }
        return line
    }

    static func render(_ value: Logger.MetadataValue) -> String {
        switch value {
        case .string(let text): text
        case .stringConvertible(let convertible): convertible.description
        case .array(let values): "[" + values.map(render).joined(separator: ",") + "]"
        case .dictionary(let values): "{" + values.keys.sorted().map { "\($0)=\(render(values[$0]!))" }.joined(separator: ",") + "}"
        }
    }

    static func quoted(_ text: String) -> String {
        guard text.isEmpty || text.contains(where: { $0 == " " || $0 == "\"" || $0 == "=" }) else { return escaped(text) }
        return "\"" + escaped(text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")) + "\""
    }

    /// Control characters as `\n`, `\t` or `\u{…}`; format characters and U+2028/U+2029 as `\u{…}`
    /// (``UntrustedText/isUnsafe(_:)``).
    static func escaped(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: UntrustedText.isUnsafe) else { return text }
        var result = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            case _ where UntrustedText.isUnsafe(scalar): result += "\\u{" + String(scalar.value, radix: 16) + "}"
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    /// `2026-11-23T18:50:00.123Z`.
    static func timestamp(_ date: Date) -> String {
        let interval = date.timeIntervalSince1970
        var seconds = time_t(interval.rounded(.down))
        let milliseconds = Int((interval - interval.rounded(.down)) * 1000)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func pad(_ value: Int32, _ width: Int = 2) -> String {
            let digits = String(value)
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        return "\(pad(parts.tm_year + 1900, 4))-\(pad(parts.tm_mon + 1))-\(pad(parts.tm_mday))T\(pad(parts.tm_hour)):\(pad(parts.tm_min)):\(pad(parts.tm_sec)).\(pad(Int32(min(milliseconds, 999)), 3))Z"
    }
}
