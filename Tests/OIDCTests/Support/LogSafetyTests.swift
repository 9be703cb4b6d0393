import Foundation
import Logging
import OIDC
import OIDCTesting
import OIDCTestSupport
import Testing

/// Log lines and messages cannot be forged or hidden by what a provider or a file name holds, a
/// key's account is logged whole, and logging off builds no metadata (the issue 14 review).
@Suite("Log safety: forged lines, long accounts, cost when off", .timeLimit(.scaledMinutes(1)))
struct LogSafetyTests {
    /// A line feed, NEL, the line and paragraph separators, bidi overrides and isolates, zero-width
    /// characters and the BOM: each can split a line for some reader or make it show something else.
    static let unsafe: [Unicode.Scalar] = [
        "\n", "\u{85}", "\u{2028}", "\u{2029}", "\u{202E}", "\u{202A}", "\u{2066}", "\u{2067}", "\u{2068}", "\u{2069}",
        "\u{200B}", "\u{200E}", "\u{FEFF}", "\u{61C}",
    ]

    static func hasUnsafe(_ text: String) -> Bool {
        text.unicodeScalars.contains { unsafe.contains($0) || [.control, .format, .lineSeparator, .paragraphSeparator].contains($0.properties.generalCategory) }
    }

    @Test("UntrustedText.sanitized and .untrusted metadata replace control, format, line and paragraph separator characters", arguments: LogSafetyTests.unsafe)
    func sanitizerReplaces(scalar: Unicode.Scalar) {
        let text = "invalid_grant" + String(scalar) + "fake=1"
        let shown = UntrustedText.sanitized(text)
        #expect(shown == "invalid_grant?fake=1")
        #expect(!Self.hasUnsafe(Logger.MetadataValue.untrusted(text).description))
        let error = OIDCError(.providerError, "refused", providerError: OIDCError.ProviderError(error: text, errorDescription: nil, errorURI: nil))
        #expect(!Self.hasUnsafe(Logger.Metadata.failure(error)["oauth_error"]?.description ?? ""))
        // Ordinary text, accents and emoji included, is left alone.
        #expect(UntrustedText.sanitized("Zoë 🙂 — 東京") == "Zoë 🙂 — 東京")
    }

    @Test("an oauth_error holding U+2028 and U+202E reaches neither a log line nor the error's message as itself")
    func providerErrorWithSeparators() async throws {
        let recorder = LogRecorder()
        let forged = "server_error\u{2028}2026-01-01T00:00:00.000Z notice oidc.session: logged out\u{202E}txt.exe"
        try await withTestProvider { provider in
            try await withNIOHTTPTransport(logger: recorder.logger("oidc.transport")) { transport in
                let configuration = try await ProviderDiscovery(transport: transport).metadata(for: provider.issuer).configuration(confidential: false)
                let client = TokenClient(provider: configuration, clientID: TestProvider.Client.default.id, transport: transport, logger: recorder.logger("oidc.token"))
                let tokens = try await provider.issueTokens()
                await provider.failNextTokenRequests(1, with: .oauthError(forged, status: 400))
                let error = await #expect(throws: OIDCError.self) { try await client.refresh(try #require(tokens.refreshToken)) }
                #expect(error?.providerError?.error == forged)  // kept as sent for code that matches on it
                #expect(!Self.hasUnsafe(error?.description ?? ""), "\(error?.description ?? "")")
                #expect(!Self.hasUnsafe(error?.message ?? ""))
            }
        }
        let refused = try #require(recorder.lines("oidc.token", "token endpoint refused the request").first)
        #expect(refused.metadata["oauth_error"]?.description.hasPrefix("server_error?2026") == true)
        #expect(!recorder.all.isEmpty)
        for line in recorder.all { #expect(!Self.hasUnsafe(line.rendered), "\(line.rendered)") }
    }

    @Test("FileKeychain logs a hashed account (sha256: and 64 hex digits) whole, and a corrupt file's path and moved_to sanitised")
    func storeMetadata() async throws {
        let recorder = LogRecorder()
        // A directory whose name holds a line separator and a bidi override.
        let parent = FileManager.default.temporaryDirectory.appendingPathComponent("oidc-log-safety-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: parent) }
        let directory = parent.appendingPathComponent("store\u{2028}fake\u{202E}dir")
        let store = try FileKeychain(directory: directory, logger: recorder.logger("oidc.store"))
        let key = try TokenStoreKey(service: "oidc", hashingAccount: Secret("user@example.com/" + UUID().uuidString))
        #expect(key.account.count == 71)
        try await withTestProvider { provider in
            _ = try await store.inject(try await provider.issueTokens(), issuer: provider.issuer, clientID: "test-client", key: key)
        }
        let saved = try #require(recorder.lines("oidc.store", "login saved").first)
        #expect(saved.metadata["account"]?.description == key.account)

        // Corrupt the stored file: the load moves it aside and logs where from and where to.
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { !$0.hasPrefix(".") && !$0.hasSuffix(".lock") }
        let data = try #require(files.first { $0.hasSuffix(".json") } ?? files.first)
        try Data("not json".utf8).write(to: directory.appendingPathComponent(data))
        #expect(throws: OIDCError.self) { try store.load(key) }
        let moved = try #require(recorder.lines("oidc.store", "corrupt stored login moved aside").first, "\(files)")
        let path = try #require(moved.metadata["path"]?.description)
        let movedTo = try #require(moved.metadata["moved_to"]?.description)
        #expect(path.contains("store?fake?dir/") && movedTo.contains("store?fake?dir/"), "\(path) \(movedTo)")
        #expect(moved.metadata["account"]?.description == key.account)
        for line in recorder.all { #expect(!Self.hasUnsafe(line.rendered), "\(line.rendered)") }
    }

    @Test("with every logger at critical, a refresh, a request and a logout that revokes build no log metadata (no sanitiser call) and log nothing")
    func noMetadataWhenOff() async throws {
        let recorder = LogRecorder()
        func off(_ label: String) -> Logger {
            var logger = recorder.logger(label)
            logger.logLevel = .critical
            return logger
        }
        let calls = UntrustedText.CallCount()
        try await withTestProvider { provider in
            try await withNIOHTTPTransport(logger: off("oidc.transport")) { transport in
                let configuration = try await ProviderDiscovery(transport: transport).metadata(for: provider.issuer).configuration(confidential: false)
                let client = TokenClient(provider: configuration, clientID: TestProvider.Client.default.id, transport: transport, logger: off("oidc.token"))
                let store = InMemoryTokenStore()
                let key = TokenStoreKey(service: "oidc", account: "cost-when-off")
                try await provider.logIn(into: store, key: key)
                let session = AuthenticatedSession(
                    store: store, key: key, source: .refreshToken(client), transport: transport,
                    allowlist: .default(for: URL(string: provider.issuer)!), logger: off("oidc.session")
                )
                await provider.expireAccessTokens()
                try await UntrustedText.$calls.withValue(calls) {
                    #expect(try await session.send(HTTPRequest(url: URL(string: provider.protectedResourceURL)!)).status == 200)
                    _ = try await session.refreshNow()
                    try await session.logout()
                }
                #expect(await provider.grantCount("refresh_token") == 2)
                #expect(await provider.requestCount(.revocation) == 1)
            }
        }
        #expect(calls.value == 0, "metadata was built for a logger that is off")
        #expect(recorder.all.isEmpty)
    }
}
