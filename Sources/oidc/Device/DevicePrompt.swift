import Foundation
import OIDC
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What `oidc login --flow device` shows on stderr (stdout stays clean): the verification URI and
/// the user code, always both and exactly as the provider sent them; the URI with the code in it
/// when the provider sends one (as a QR code with `--qr`); then when the wait ends, in UTC as every
/// time `oidc` prints (RFC 3339, `Z`), and, on a terminal, a line that counts down to it. The wait
/// ends when the codes expire, or earlier when `--timeout` says so. The device code is never shown.
struct DevicePrompt {
    let issuer: String
    let userCode: String
    let verificationURI: URL
    let verificationURIComplete: URL?
    let expiresAt: Date
    let qrCode: QRCode?
    /// When `--timeout` ends the wait, if it was given; it is shown only when it comes before the
    /// codes expire.
    var timeoutEndsAt: Date? = nil
    /// `--timeout`'s seconds, named with the time it ends the wait at.
    var timeoutSeconds: Int64? = nil

    /// When the wait ends: the codes' expiry, or `--timeout`'s end when that comes first.
    var waitEndsAt: Date { timeoutEndsAt.map { min($0, expiresAt) } ?? expiresAt }

    /// Whether stderr is a terminal: the countdown and the QR code's colours are for one only.
    static var stderrIsTerminal: Bool { isatty(2) == 1 }

    /// The lines shown before the wait.
    func lines(terminal: Bool) -> [String] {
        var lines = [
            "oidc: to sign in at \(issuer), open this page in a browser on any device:",
            "oidc:     \(verificationURI.absoluteString)",
            "oidc: and enter the code:",
            "oidc:     \(userCode)",
        ]
        if let verificationURIComplete {
            lines.append("oidc: or open this link, which holds the code:")
            lines.append("oidc:     \(verificationURIComplete.absoluteString)")
        }
        if let qrCode {
            lines.append("oidc: or scan this QR code with a phone:")
            lines.append(qrCode.rendered(colors: terminal))
        }
        lines.append("oidc: waiting for you to approve (\(waitText); Ctrl-C to cancel)")
        return lines
    }

    /// `the code expires at 2026-12-02T05:43:50Z`, or, when `--timeout` ends the wait first,
    /// `until 2026-12-02T05:39:03Z (--timeout 3 s; the code expires at 2026-12-02T05:43:50Z)`.
    var waitText: String {
        guard let timeoutEndsAt, timeoutEndsAt < expiresAt else { return "the code expires at \(Self.clock(expiresAt))" }
        let seconds = timeoutSeconds.map { " \($0) s" } ?? ""
        return "until \(Self.clock(timeoutEndsAt)), --timeout\(seconds); the code itself expires at \(Self.clock(expiresAt))"
    }

    func show() {
        for line in lines(terminal: Self.stderrIsTerminal) { Console.error(line) }
    }

    /// On a terminal, rewrites one line every second with the time left, until the task is
    /// cancelled, and then clears it; elsewhere does nothing (a log file gets no `\r` noise).
    func countDown() async {
        guard Self.stderrIsTerminal else { return }
        defer { Console.errorFragment("\r\u{1B}[K") }
        while !Task.isCancelled {
            let left = max(0, Int(waitEndsAt.timeIntervalSince(CLIClock.now()).rounded(.down)))
            Console.errorFragment("\r\u{1B}[Koidc: \(Self.minutes(left)) left to enter the code")
            do { try await Task.sleep(for: .seconds(1)) } catch { return }
        }
    }

    /// `4:05`, `12:00`.
    static func minutes(_ seconds: Int) -> String {
        let rest = seconds % 60
        return "\(seconds / 60):\(rest < 10 ? "0" : "")\(rest)"
    }

    /// `date` as every time `oidc` prints: RFC 3339 in UTC (`2026-12-02T05:43:50Z`), as the login's
    /// success line and `oidc status` show the token's expiry.
    static func clock(_ date: Date) -> String { ExecCredential.rfc3339(date) }
}
