import Foundation
import OIDC
import OIDCTesting
import OIDCTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `oidc login --flow jwt-bearer` against an independent server: Authlib's JWTBearerGrant (PyPI) in
/// scripts/jwt-bearer-server.py, which checks the assertion's signature, issuer, audience and expiry
/// itself. It runs when the virtualenv of `scripts/jwt-bearer-server.sh install` is there:
/// `$OIDC_AUTHLIB_PYTHON`, or `.build-interop/venv/bin/python` in the checkout.
@Suite("oidc login --flow jwt-bearer against Authlib", .timeLimit(.scaledMinutes(3)), .enabled(if: AuthlibPeer.python != nil, "run scripts/jwt-bearer-server.sh install"))
struct AuthlibJWTBearerTests {
    @Test("a workload JWT traded for a token that Authlib's resource accepts; a rotated file presented on expiry; an expired JWT refused (exit 4) after one request")
    func grant() async throws {
        let python = try #require(AuthlibPeer.python)
        let sandbox = LoginSandbox()
        let key = try TestSigningKey.generate(.es256, keyID: "cluster-1")
        let jwks = try ClientCredentialsCommandTests.privateFile(sandbox, "jwks.json", try key.jwksJSON)
        let server = try HelperProcess(
            executable: python,
            [AuthlibPeer.script, "--jwks-file", jwks, "--assertion-issuer", WorkloadAssertion.issuer],
            watchdog: .scaled(.seconds(60)))
        defer { server.kill() }
        let issuer = try #require(await server.nextLine(), "the server did not start: \(server.standardError)")
        #expect(issuer.hasPrefix("http://127.0.0.1:"))

        let first = try WorkloadAssertion.make(key, subject: "builder-1", audience: issuer)
        let file = try ClientCredentialsCommandTests.privateFile(sandbox, "token", first.revealedValue + "\n")
        let login = try await sandbox.run([
            "login", "--flow", "jwt-bearer", "--issuer", issuer, "--client-id", "workload", "--assertion-file", file,
            "--scope", "reports", "--resource", "https://api.example.com/", "--profile", "w",
        ])
        #expect(login.status == 0, "\(login.stderr)")
        #expect(!login.stderr.contains(first.revealedValue))
        let me = try await sandbox.run(["request", issuer + "/resource", "--profile", "w"])
        #expect(me.status == 0 && me.stdout.contains(#""sub":"builder-1""#), "\(me.stdout) \(me.stderr)")

        let second = try WorkloadAssertion.make(key, subject: "builder-2", audience: issuer + "/token")
        try second.revealedValue.write(toFile: file, atomically: true, encoding: .utf8)
        chmod(file, 0o600)
        try ClientCredentialsCommandTests.expire(sandbox, profile: "w")
        let again = try await sandbox.run(["request", issuer + "/resource", "--profile", "w"])
        #expect(again.status == 0 && again.stdout.contains(#""sub":"builder-2""#), "\(again.stdout) \(again.stderr)")

        let expired = try WorkloadAssertion.make(key, audience: issuer, lifetime: -120)
        try expired.revealedValue.write(toFile: file, atomically: true, encoding: .utf8)
        chmod(file, 0o600)
        try ClientCredentialsCommandTests.expire(sandbox, profile: "w")
        let refused = try await sandbox.run(["token", "--profile", "w"])
        #expect(refused.status == 4, "\(refused.stderr)")
        #expect(refused.stderr.contains("invalid_grant") && !refused.stderr.contains(expired.revealedValue), "\(refused.stderr)")

        let log = try await RawHTTPClient.get(issuer + "/testing/log")
        let entries = try #require(try JSONSerialization.jsonObject(with: Data(log.body)) as? [[String: Any]], "\(log.text)")
        #expect(entries.count == 3, "one request each: \(entries)")
        #expect(entries.map { $0["status"] as? Int } == [200, 200, 400])
        #expect(entries.map { $0["assertion_sub"] as? String } == ["builder-1", "builder-2", "system:serviceaccount:ci:builder"])
        for entry in entries {
            #expect(entry["grant_type"] as? String == "urn:ietf:params:oauth:grant-type:jwt-bearer")
            #expect(entry["resource"] as? String == "https://api.example.com/" && entry["scope"] as? String == "reports")
        }
    }
}

/// Where scripts/jwt-bearer-server.sh installed Authlib.
/// `oidc login --resource URL --identity-assertion-from PROFILE` against Authlib as the resource's
/// authorization server: the ID-JAG that TestProvider (the identity provider) issues is a JWT
/// bearer assertion that Authlib's JWTBearerGrant checks with the identity provider's keys.
@Suite("oidc login --identity-assertion-from against Authlib", .timeLimit(.scaledMinutes(3)), .enabled(if: AuthlibPeer.python != nil, "run scripts/jwt-bearer-server.sh install"))
struct AuthlibIdentityAssertionTests {
    @Test("the ID-JAG from the identity provider's token exchange taken by Authlib for the resource; its resource answers with the user's sub")
    func identityAssertion() async throws {
        let python = try #require(AuthlibPeer.python)
        let secret = IdentityAssertionCommandTests.secret
        try await withTestProvider(TestProvider.Configuration(clients: [.default, .confidential(id: "workload", secret: secret)])) { idp in
            let sandbox = LoginSandbox()
            let jwks = try ClientCredentialsCommandTests.privateFile(sandbox, "idp-jwks.json", try await idp.jwksJSON())
            let server = try HelperProcess(executable: python, [AuthlibPeer.script, "--jwks-file", jwks, "--assertion-issuer", idp.issuer], watchdog: .scaled(.seconds(60)))
            defer { server.kill() }
            let issuer = try #require(await server.nextLine(), "the server did not start: \(server.standardError)")
            let secretFile = try ClientCredentialsCommandTests.privateFile(sandbox, "secret", secret)
            let corp = try await sandbox.run(["login", "--issuer", idp.issuer, "--client-id", "workload", "--client-secret-file", secretFile, "--profile", "corp"])
            #expect(corp.status == 0, "\(corp.stderr)")
            let login = try await sandbox.run([
                "login", "--resource", issuer + "/resource", "--identity-assertion-from", "corp", "--client-id", "workload", "--scope", "reports", "--profile", "mcp",
            ])
            #expect(login.status == 0, "\(login.stderr)")
            let me = try await sandbox.run(["request", issuer + "/resource", "--profile", "mcp"])
            let subject = await idp.user.subject
            #expect(me.status == 0 && me.stdout.contains(#""sub":"\#(subject)""#), "\(me.stdout) \(me.stderr)")
            let log = try await RawHTTPClient.get(issuer + "/testing/log")
            let entries = try #require(try JSONSerialization.jsonObject(with: Data(log.body)) as? [[String: Any]], "\(log.text)")
            #expect(entries.count == 1 && entries.first?["assertion_typ"] as? String == "oauth-id-jag+jwt", "\(entries)")
            #expect(entries.first?["assertion_iss"] as? String == idp.issuer && entries.first?["resource"] as? String == issuer + "/resource", "\(entries)")
        }
    }
}

enum AuthlibPeer {
    static let root = DPoPClientPeer.root
    static var script: String { root.appendingPathComponent("scripts/jwt-bearer-server.py").path }

    /// The virtualenv's Python, if installed.
    static var python: String? {
        if let named = ProcessInfo.processInfo.environment["OIDC_AUTHLIB_PYTHON"], !named.isEmpty { return named }
        let installed = root.appendingPathComponent(".build-interop/venv/bin/python").path
        return FileManager.default.isExecutableFile(atPath: installed) ? installed : nil
    }
}
