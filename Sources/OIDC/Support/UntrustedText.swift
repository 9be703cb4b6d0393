internal import Foundation

/// Makes untrusted text safe to show: every character that could forge or hide part of a line
/// replaced by `?`, length bounded.
package enum UntrustedText {
    package static func sanitized(_ text: String, limit: Int = 200) -> String {
        #if DEBUG
        calls?.increment()
        #endif
        guard text.unicodeScalars.contains(where: isUnsafe) else { return bounded(text, limit: limit) }
        return bounded(String(String.UnicodeScalarView(text.unicodeScalars.map { isUnsafe($0) ? "?" : $0 })), limit: limit)
    }

    /// A scalar that must not reach a terminal or a log line as itself: a control character (`Cc`:
    /// line breaks, escape sequences, NEL U+0085), a format character (`Cf`: bidi overrides and
    /// isolates such as U+202E and U+2066–2069, zero-width characters, the BOM) or a line or
    /// paragraph separator (`Zl`, `Zp`: U+2028, U+2029). Each can end a line early for some reader,
    /// or make the text show something else than it holds.
    package static func isUnsafe(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .control, .format, .lineSeparator, .paragraphSeparator: true
        default: false
        }
    }

    private static func bounded(_ text: String, limit: Int) -> String {
        text.count > limit ? String(text.prefix(limit)) + "…" : text
    }

    #if DEBUG
    /// Debug builds only, for tests: when set, counts the calls of ``sanitized(_:limit:)`` made in
    /// this task and its child tasks. Log metadata made from outside text, an endpoint or an issuer
    /// goes through it, so a count of zero with logging off shows that no such metadata was built.
    @TaskLocal package static var calls: CallCount?

    /// A thread-safe call counter.
    package final class CallCount: @unchecked Sendable {
        private let lock = NSLock()
        private var count = 0

        package init() {}

        /// The calls counted so far.
        package var value: Int { lock.withLock { count } }

        func increment() { lock.withLock { count += 1 } }
    }
    #endif
}
