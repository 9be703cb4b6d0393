import Foundation
import OIDC
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What `oidc login --flow device` shows on stderr (stdout stays clean): the verification URI and
/// the user code, always both and exactly as the provider sent them; the URI with the code in it
/// when the provider sends one (as a QR code with `--qr`); then, on a terminal, a line that counts
/// down to the codes' expiry. The device code is never shown.
struct DevicePrompt {
    let issuer: String
    let userCode: String
    let verificationURI: URL
    let verificationURIComplete: URL?
    let expiresAt: Date
    let qrCode: QRCode?

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
        lines.append("oidc: waiting for you to approve (the code expires at \(Self.clock(expiresAt)); Ctrl-C to cancel)")
        return lines
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
            let left = max(0, Int(expiresAt.timeIntervalSinceNow.rounded(.down)))
            Console.errorFragment("\r\u{1B}[Koidc: \(Self.minutes(left)) left to enter the code")
            do { try await Task.sleep(for: .seconds(1)) } catch { return }
        }
    }

    /// `4:05`, `12:00`.
    static func minutes(_ seconds: Int) -> String {
        let rest = seconds % 60
        return "\(seconds / 60):\(rest < 10 ? "0" : "")\(rest)"
    }

    /// The local time of day of `date`, `HH:MM:SS`.
    static func clock(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.dateFormat = "HH:mm:ss"
        return formatter.string(from: date)
    }
}
