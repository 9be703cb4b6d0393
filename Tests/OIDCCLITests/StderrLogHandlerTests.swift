import Foundation
import Logging
@testable import oidc
import Testing

/// The `oidc` command's log handler: one event is one line that shows what it holds, whatever a
/// provider put in a value (issue 14 review).
@Suite("oidc's stderr log handler")
struct StderrLogHandlerTests {
    static let date = Date(timeIntervalSince1970: 1_795_460_000.123)

    @Test("control, format and separator characters in a value, a key or the message are escaped: one event, one line, no bidi override")
    func escapesUnsafeScalars() {
        let forged = "invalid_grant\u{2028}2026-01-01T00:00:00.000Z notice oidc.session: logged out\u{2029}\u{85}\u{202E}exe.txt\u{2066}x\u{2069}\u{200B}\u{FEFF}\r\n"
        let line = StderrLogHandler.line(
            date: Self.date, level: .notice, label: "oidc.session", message: "refresh rejected\u{2028}by the provider",
            metadata: ["oauth_error": .string(forged), "kid\u{202E}": .stringConvertible(forged), "host": .array([.string("a\u{2028}b")])]
        )
        let unsafe = line.unicodeScalars.filter {
            [.control, .format, .lineSeparator, .paragraphSeparator].contains($0.properties.generalCategory)
        }
        #expect(unsafe.isEmpty, "\(unsafe.map { String($0.value, radix: 16) })")
        #expect(line.contains(#"invalid_grant\u{2028}2026"#))
        #expect(line.contains(#"\u{2029}\u{85}\u{202e}exe.txt\u{2066}x\u{2069}\u{200b}\u{feff}\r\n"#))
        #expect(line.contains(#"refresh rejected\u{2028}by the provider"#))
        #expect(line.contains(#"kid\u{202e}="#))
        #expect(line.contains(#"host=[a\u{2028}b]"#))
    }

    @Test("ordinary text is printed as it is")
    func plainText() {
        let line = StderrLogHandler.line(date: Self.date, level: .debug, label: "oidc.token", message: "tokens issued", metadata: ["subject": "Zoë 🙂 東京", "scope": "openid email"])
        #expect(line.hasSuffix(#"debug oidc.token: tokens issued scope="openid email" subject="Zoë 🙂 東京""#), "\(line)")
    }
}
