import Foundation
import OIDC
import OIDCTestSupport
import OIDCTesting
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `oidc resource-server --introspect` against TestProvider's introspection endpoint (RFC 7662),
/// and the exit codes of a server that cannot start.
@Suite("oidc resource-server --introspect, and start-up failures", .timeLimit(.scaledMinutes(2)))
struct ResourceServerIntrospectionTests {
    static let secret = "introspecting-client-secret-0123456789"

    @Test("an opaque token of the client is introspected and accepted; an unknown one and a JWT the provider never issued are inactive")
    func introspection() async throws {
        var configuration = TestProvider.Configuration()
        configuration.clients.append(.confidential(id: "my-daemon", secret: Self.secret))
        try await withTestProvider(configuration) { provider in
            let rp = try await RelyingParty.discover(
                issuer: provider.issuer, clientID: "my-daemon", authentication: .clientSecretBasic(Secret(Self.secret)))
            let token = try await rp.tokenClient.clientCredentials(scopes: ["read"]).accessToken.revealedValue
            let secretFile = try ProviderAndMintCommandTests.temporaryFile(Self.secret)
            let server = try await ResourceServerProcess.start([
                "--issuer", provider.issuer, "--audience", "my-daemon", "--introspect", "--client-id", "my-daemon", "--client-secret-file", secretFile,
                "--require-scope", "read",
            ])
            defer { server.process.signal(SIGKILL) }
            let accepted = try await server.send(headers: [("Authorization", "Bearer " + token)])
            #expect(accepted.status == 200, "\(String(decoding: accepted.body, as: UTF8.self))")
            #expect(accepted.json["client_id"] as? String == "my-daemon")
            #expect(accepted.json["scope"] as? String == "read")
            #expect(accepted.json["iss"] as? String == provider.issuer)

            let jwt = try await provider.issueJWTAccessToken(audience: "my-daemon", clientID: "my-daemon", scope: "read")
            for unknown in ["not-a-token-the-provider-issued", jwt] {
                let refused = try await server.send(headers: [("Authorization", "Bearer " + unknown)])
                #expect(refused.status == 401)
                #expect(refused.headers.values("WWW-Authenticate").first?.hasPrefix(#"Bearer error="invalid_token", error_description="The access token is not active"#) == true)
            }
            let stopped = await server.stop()
            #expect(stopped.stderr.contains("(inactive_token)"), "\(stopped.stderr)")
            #expect(!stopped.stderr.contains(Self.secret) && !stopped.stderr.contains(token))
        }
    }

    @Test("a port in use exits 2 naming it; an issuer that cannot be reached exits 5; a secret file others may read exits 2")
    func startFailures() async throws {
        let tokens = try AccessTokenIssuer()
        let running = try await ResourceServerProcess.start(tokens.arguments)
        defer { running.process.signal(SIGKILL) }
        let port = try #require(URL(string: running.base)?.port)
        let busy = try await ResourceServerProgram.run(tokens.arguments + ["--port", "\(port)"], timeout: .scaled(.seconds(20)))
        #expect(busy.status == 2, "\(busy.stderr)")
        #expect(busy.stderr.contains("127.0.0.1:\(port) is in use"), "\(busy.stderr)")
        #expect(busy.stdout.isEmpty)

        let closed = try await ResourceServerProgram.run(["--issuer", "http://127.0.0.1:\(try freePort())", "--audience", "a"], timeout: .scaled(.seconds(30)))
        #expect(closed.status == 5, "\(closed.stderr)")
        #expect(closed.stdout.isEmpty)

        let open = FileManager.default.temporaryDirectory.appendingPathComponent("oidc-rs-\(UUID().uuidString)").path
        #expect(FileManager.default.createFile(atPath: open, contents: Data(Self.secret.utf8), attributes: [.posixPermissions: 0o644]))
        defer { try? FileManager.default.removeItem(atPath: open) }
        try await withTestProvider { provider in
            let readable = try await ResourceServerProgram.run([
                "--issuer", provider.issuer, "--audience", "a", "--introspect", "--client-id", "c", "--client-secret-file", open,
            ], timeout: .scaled(.seconds(20)))
            #expect(readable.status == 2, "\(readable.stderr)")
            #expect(readable.stderr.contains("--client-secret-file"), "\(readable.stderr)")
        }
        #expect(await running.stop().status == 0)
    }

    @Test("SIGINT while the issuer's discovery hangs ends the start at once with 130, SIGTERM with 0", arguments: ["INT", "TERM"])
    func signalDuringStart(name: String) async throws {
        let signal = name == "INT" ? SIGINT : SIGTERM
        let silent = try SilentListener()
        defer { silent.close() }
        let process = try ChildProcess(ResourceServerProgram.executable, ResourceServerProgram.arguments(["--issuer", "http://127.0.0.1:\(silent.port)", "--audience", "a"]))
        defer { process.signal(SIGKILL) }
        // The event: the command's discovery request has connected (and will get no answer).
        await ChildProcess.offPool { silent.acceptOne() }
        let started = ContinuousClock.now
        process.signal(signal)
        #expect(await process.exitStatus() == (signal == SIGINT ? 130 : 0))
        #expect(ContinuousClock.now - started < .seconds(10), "the start was not cancelled: it waited for the discovery's timeout")
        #expect(await process.output().isEmpty, "no URL is printed")
    }
}

/// A loopback TCP listener that accepts and never answers: a provider that hangs.
final class SilentListener: @unchecked Sendable {
    let port: Int
    private let fd: Int32
    private var accepted: [Int32] = []

    init() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        self.fd = fd
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && listen(fd, 8) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard fd >= 0, bound else { throw ListenFailure() }
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    struct ListenFailure: Error {}

    /// Blocks until one connection arrives, and keeps it open.
    func acceptOne() {
        let connection = accept(fd, nil, nil)
        if connection >= 0 { accepted.append(connection) }
    }

    func close() {
        for connection in accepted + [fd] { _ = Glibc.close(connection) }
    }
}
