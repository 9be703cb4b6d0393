import Foundation
import OIDC
import OIDCTesting
import OIDCTestSupport
import Testing

/// What a review of issue 35's first submission found at the terminal (N1 to N4), as a user meets it.
@Suite("Issue 35's review: status, logout and verify messages")
struct LeftoverMessageTests {
    @Test("N1: oidc status of a profile that was never logged in says how to log in, exit 4")
    func statusOfAnUnknownProfile() async throws {
        let store = TokenCommandTests.temporaryStore()
        defer { try? FileManager.default.removeItem(atPath: store) }
        let result = try await OIDCBinary.run(["status", "--store", store, "--profile", "never"])
        #expect(result.status == 4, "\(result.stderr)")
        #expect(result.stdout.contains("profile never: not logged in"), "\(result.stdout)")
        #expect(
            result.stderr.contains("oidc: profile 'never' is not logged in; log in with: oidc login --profile never"),
            "\(result.stderr)"
        )
        #expect(result.stderr.contains("--issuer URL --client-id ID"), "\(result.stderr)")
        // JSON is for scripts: the same exit, no prose on stderr.
        let json = try await OIDCBinary.run(["status", "--store", store, "--profile", "never", "--output", "json"])
        #expect(json.status == 4)
        #expect(!json.stderr.contains("log in with"), "\(json.stderr)")
    }

    @Test("N2: oidc logout of a profile with nothing stored writes nothing to the store")
    func logoutOfAnUnknownProfileLeavesNoLockFile() async throws {
        let store = TokenCommandTests.temporaryStore()
        defer { try? FileManager.default.removeItem(atPath: store) }
        try FileManager.default.createDirectory(atPath: store, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let result = try await OIDCBinary.run(["logout", "--store", store, "--profile", "ghost"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("profile 'ghost' was not logged in; nothing to do"), "\(result.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: store) == [])
    }

    @Test("N4: a revocation that times out at logout is named once, with OIDC_HTTP_TIMEOUT, and the login is still deleted")
    func logoutWhoseRevocationTimesOut() async throws {
        try await withTestProvider { provider in
            let store = TokenCommandTests.temporaryStore()
            defer { try? FileManager.default.removeItem(atPath: store) }
            _ = try await TokenCommandTests.inject(provider, store: store)
            await provider.failNextRequests(1, to: .revocation, with: .delay(.seconds(30)))
            let result = try await OIDCBinary.run(
                ["logout", "--store", store, "--profile", "work"], environment: ["OIDC_HTTP_TIMEOUT": "1"]
            )
            #expect(result.status == 0, "\(result.stderr)")
            #expect(
                result.stderr.contains(
                    "logged out profile 'work'; the revocation got no answer within 1 s (OIDC_HTTP_TIMEOUT sets the wait), so the tokens stay valid"
                ), "\(result.stderr)")
            // The login is gone: no advice to try again.
            #expect(!result.stderr.contains("try again"), "\(result.stderr)")
            #expect(!result.stderr.contains(".)"), "\(result.stderr)")
            let status = try await OIDCBinary.run(["status", "--store", store, "--profile", "work"])
            #expect(status.status == 4, "\(status.stdout)")
        }
    }

    @Test("a mistyped OIDC_HTTP_TIMEOUT stops oidc logout with exit 2 before the login is deleted (its revocation would be skipped)")
    func logoutWithABadTimeoutKeepsTheLogin() async throws {
        try await withTestProvider { provider in
            let store = TokenCommandTests.temporaryStore()
            defer { try? FileManager.default.removeItem(atPath: store) }
            _ = try await TokenCommandTests.inject(provider, store: store, expiresIn: 600)
            let result = try await OIDCBinary.run(["logout", "--store", store, "--profile", "work"], environment: ["OIDC_HTTP_TIMEOUT": "abc"])
            #expect(result.status == 2, "\(result.stderr)")
            #expect(result.stderr.contains("OIDC_HTTP_TIMEOUT must be whole seconds"), "\(result.stderr)")
            let status = try await OIDCBinary.run(["status", "--store", store, "--profile", "work"])
            #expect(status.status == 0, "\(status.stdout) \(status.stderr)")
            #expect(await provider.requestCount(.revocation) == 0)
        }
    }

    @Test("N3: an access token given to oidc verify as an ID token gets the --kind access hint, not the nonce note")
    func verifyHintComesAlone() async throws {
        let tokens = try AccessTokenIssuer()
        let result = try await OIDCBinary.run(["verify", "-"] + tokens.arguments, stdin: try tokens.token())
        #expect(result.status == 4, "\(result.stderr)")
        #expect(result.stderr.contains("use --kind access"), "\(result.stderr)")
        #expect(!result.stderr.contains("--nonce"), "\(result.stderr)")
    }
}
