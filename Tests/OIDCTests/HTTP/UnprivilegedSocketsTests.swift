import Foundation
import OIDC
import OIDCTesting
import OIDCTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The guard of issue 28: each of the library's three socket bootstraps opens or accepts a real
/// connection without any privilege. `.socketOption(.tcp_nodelay)` once set `SO_DEBUG` (option 1 of
/// `SOL_SOCKET`), which needs `CAP_NET_ADMIN`: every connection failed for ordinary users and in
/// containers, and no test saw it because every run was root's. The suite is meant to be run as an
/// ordinary user (CONTRIBUTING.md; `.ci/run` does): there, a bootstrap that needs a privilege fails
/// here. Root's runs are covered by the command's test of the same name, which runs `oidc demo`
/// without `CAP_NET_ADMIN`.
@Suite("Sockets need no privilege", .timeLimit(.scaledMinutes(1)))
struct UnprivilegedSocketsTests {
    /// Whether this process may do what an ordinary user may not (`CAP_NET_ADMIN`, bit 12 of CapEff).
    static var hasNetAdmin: Bool {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("CapEff:") }),
            let mask = UInt64(line.dropFirst("CapEff:".count).trimmingCharacters(in: .whitespaces), radix: 16)
        else { return false }
        return mask & (1 << 12) != 0
    }

    @Test("the transport connects to the test provider, which accepts: an answer comes back (meaningful without CAP_NET_ADMIN, as the suite is run)")
    func transportAndTestProvider() async throws {
        try await withTestProvider { provider in
            try await withNIOHTTPTransport { transport in
                let response = try await transport.send(HTTPRequest(url: URL(string: provider.discoveryURL)!))
                #expect(response.status == 200)
            }
        }
        if Self.hasNetAdmin { Issue.record(Comment(rawValue: Self.privileged)) }
    }

    @Test("the loopback listener accepts the transport's connection and answers it")
    func loopbackListener() async throws {
        let listener = try await LoopbackRedirectListener.start()
        do {
            try await withNIOHTTPTransport { transport in
                // No login waits: the listener still answers, with an error page (503).
                let response = try await transport.send(HTTPRequest(url: URL(string: listener.redirectURI + "?code=x&state=y")!))
                #expect(response.status == 503, "\(response.status)")
            }
        } catch {
            await listener.close()
            throw error
        }
        await listener.close()
        if Self.hasNetAdmin { Issue.record(Comment(rawValue: Self.privileged)) }
    }

    /// Recorded, with the tests above still run, when the suite runs with `CAP_NET_ADMIN`.
    static let privileged =
        "this test ran with CAP_NET_ADMIN, so it cannot tell whether a bootstrap needs a privilege: run the suite as an ordinary user (CONTRIBUTING.md), as .ci/run does"
}
