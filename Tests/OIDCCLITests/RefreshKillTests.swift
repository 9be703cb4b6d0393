import Foundation
import OIDC
import OIDCTesting
import OIDCTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Security review 3, M2: `oidc token` killed after the provider rotated the refresh token, while the
/// provider's keys do not answer, must leave the rotated refresh token in the store.
@Suite("A refresh killed while the JWKS host stalls", .timeLimit(.scaledMinutes(2)))
struct RefreshKillTests {
    /// A TCP listener on 127.0.0.1 that never accepts: a connection completes in the kernel's queue
    /// and its request waits there for an answer that never comes.
    final class Tarpit {
        let fd: Int32
        let port: Int

        init() throws {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            address.sin_port = 0
            let bound = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard fd >= 0, bound == 0, listen(fd, 16) == 0 else { throw OIDCError(.invalidArgument, "The tarpit could not listen.") }
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            _ = withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
            }
            self.fd = fd
            port = Int(UInt16(bigEndian: address.sin_port))
        }

        deinit { close(fd) }
    }

    @Test("oidc token --force-refresh, killed with SIGTERM while the keys stall, keeps the rotated refresh token: the next refresh works")
    func killedWhileTheKeysStall() async throws {
        try await withTestProvider { provider in
            let tarpit = try Tarpit()
            let store = TokenCommandTests.temporaryStore()
            let keychain = try FileKeychain(directory: URL(fileURLWithPath: store))
            let key = TokenStoreKey(service: "oidc", account: "work")
            var stalling = provider.providerConfiguration
            stalling.jwksURI = URL(string: "http://127.0.0.1:\(tarpit.port)/jwks")
            let tokens = try await provider.issueTokens()
            try await keychain.inject(tokens, issuer: provider.issuer, clientID: "test-client", subject: "test-user", provider: stalling, key: key)

            let pid = ProcessID()
            async let run = OIDCBinary.run(
                ["token", "--store", store, "--profile", "work", "--force-refresh"], timeout: .scaled(.seconds(60)), started: { pid.set($0.pid) })
            // Once the provider has rotated the refresh token, and a moment for its answer to arrive;
            // the keys then hang for 30 s.
            for _ in 0..<400 where await provider.grantCount("refresh_token") == 0 { try await Task.sleep(for: .milliseconds(50)) }
            try await Task.sleep(for: .seconds(2))
            kill(try #require(pid.get()), SIGTERM)
            let killed = try await run
            #expect(killed.status == SIGTERM, "\(killed.stderr)")
            #expect(killed.stdout.isEmpty)
            #expect(await provider.grantCount("refresh_token") == 1)
            var stored = try #require(try keychain.load(key))
            #expect(stored.tokens.refreshToken != tokens.refreshToken, "the rotated refresh token was lost")

            // The keys answer again: the next refresh presents the rotated token, not the spent one.
            stored.provider = provider.providerConfiguration
            try keychain.save(stored, for: key)
            let next = try await OIDCBinary.run(["token", "--store", store, "--profile", "work", "--force-refresh"])
            #expect(next.status == 0, "\(next.stderr)")
            #expect(await provider.grantCount("refresh_token") == 2)
        }
    }

    @Test("SIGTERM while the rotated tokens are being saved waits for the save: the process then ends by SIGTERM, the rotated token kept")
    func signalDuringTheSaveIsHeld() async throws {
        // The save is slowed by a hook of debug builds only; the installed (release) binary has none.
        guard ProcessInfo.processInfo.environment["OIDC_BINARY"] == nil else { return }
        try await withTestProvider { provider in
            let store = TokenCommandTests.temporaryStore()
            let keychain = try FileKeychain(directory: URL(fileURLWithPath: store))
            let key = TokenStoreKey(service: "oidc", account: "work")
            let tokens = try await provider.issueTokens()
            try await keychain.inject(
                tokens, issuer: provider.issuer, clientID: "test-client", subject: "test-user", provider: provider.providerConfiguration, key: key)
            let pid = ProcessID()
            async let run = OIDCBinary.run(
                ["token", "--store", store, "--profile", "work", "--force-refresh"], environment: ["OIDC_TEST_SLOW_SAVE_MS": "5000"],
                timeout: .scaled(.seconds(60)), started: { pid.set($0.pid) })
            // The provider has answered the refresh (it rotated the token): the save is being held up.
            for _ in 0..<200 where await provider.grantCount("refresh_token") == 0 { try await Task.sleep(for: .milliseconds(50)) }
            try await Task.sleep(for: .seconds(1))
            let started = ContinuousClock.now
            kill(try #require(pid.get()), SIGTERM)
            let result = try await run
            #expect(result.status == SIGTERM, "\(result.stderr)")
            #expect(ContinuousClock.now - started >= .seconds(2), "the signal was not held until the save was done")
            let stored = try #require(try keychain.load(key))
            #expect(stored.tokens.refreshToken != tokens.refreshToken, "the rotated refresh token was lost")
        }
    }
}

/// Security review 4, I4: the hold starts when the refresh is sent, since the provider may rotate
/// the token before its answer arrives; it lets a signal through after a short bound.
@Suite("A refresh signalled while the provider's answer is on its way", .timeLimit(.scaledMinutes(2)))
struct RefreshSendHoldTests {
    /// Starts `oidc token --force-refresh` on a login of `provider` whose next token answer is held
    /// back `delay`, sends SIGTERM once the provider has the refresh request, and returns the
    /// result, the time from the signal to the end, and the stored and original refresh tokens.
    static func signalled(_ provider: TestProvider, delay: Duration) async throws -> (CommandResult, Duration, stored: Secret?, original: Secret?) {
        let store = TokenCommandTests.temporaryStore()
        let keychain = try FileKeychain(directory: URL(fileURLWithPath: store))
        let key = TokenStoreKey(service: "oidc", account: "work")
        let tokens = try await provider.issueTokens()
        try await keychain.inject(
            tokens, issuer: provider.issuer, clientID: "test-client", subject: "test-user", provider: provider.providerConfiguration, key: key)
        await provider.failNextTokenRequests(1, with: .delay(delay))
        let pid = ProcessID()
        async let run = OIDCBinary.run(
            ["token", "--store", store, "--profile", "work", "--force-refresh"], timeout: .scaled(.seconds(60)), started: { pid.set($0.pid) })
        // The provider has the refresh request and holds its answer back.
        for _ in 0..<400 where await provider.grantCount("refresh_token") == 0 { try await Task.sleep(for: .milliseconds(25)) }
        let started = ContinuousClock.now
        kill(try #require(pid.get()), SIGTERM)
        let result = try await run
        return (result, ContinuousClock.now - started, try keychain.load(key)?.tokens.refreshToken, tokens.refreshToken)
    }

    @Test("SIGTERM after the refresh was sent waits for the answer (3 s) and its save: then the process ends by SIGTERM, the rotated token kept")
    func heldUntilTheAnswer() async throws {
        try await withTestProvider { provider in
            let (result, elapsed, stored, original) = try await Self.signalled(provider, delay: .seconds(3))
            #expect(result.status == SIGTERM, "\(result.stderr)")
            #expect(elapsed >= .seconds(1), "the signal was not held while the answer was on its way")
            #expect(stored != original, "the rotated refresh token was lost")
        }
    }

    @Test("an answer that does not come holds SIGTERM back for 5 s at most")
    func boundedHold() async throws {
        try await withTestProvider { provider in
            let (result, elapsed, _, _) = try await Self.signalled(provider, delay: .seconds(15))
            #expect(result.status == SIGTERM, "\(result.stderr)")
            #expect(elapsed >= .seconds(4) && elapsed < .seconds(12), "\(elapsed)")
        }
    }
}

/// The process id of a command started on another thread.
final class ProcessID: @unchecked Sendable {
    private let lock = NSLock()
    private var value: pid_t?
    func set(_ pid: pid_t) { lock.withLock { value = pid } }
    func get() -> pid_t? { lock.withLock { value } }
}
