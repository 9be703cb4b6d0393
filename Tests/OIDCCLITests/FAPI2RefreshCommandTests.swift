import Foundation
import OIDC
import OIDCTesting
import OIDCTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Security review 4, I3: a profile that remembers `--fapi2` holds the ID tokens that refreshes bring
/// to FAPI 2.0's algorithms (PS256, ES256, EdDSA), as its login was.
@Suite("oidc token: refreshes of a --fapi2 profile", .timeLimit(.scaledMinutes(2)))
struct FAPI2RefreshCommandTests {
    /// A sandbox with profile `work` for `provider`'s test client, `fapi2` as given, and an expired
    /// login of it in the store; the login's tokens.
    static func setUp(_ provider: TestProvider, fapi2: Bool) async throws -> (LoginSandbox, TokenSet) {
        let sandbox = LoginSandbox()
        try FileManager.default.createDirectory(atPath: sandbox.profileDirectory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        chmod(sandbox.config, 0o700)
        chmod(sandbox.config + "/oidc", 0o700)
        let profile = #"{"version":1,"issuer":"\#(provider.issuer)","client_id":"test-client"\#(fapi2 ? #","fapi2":true"# : "")}"#
        #expect(FileManager.default.createFile(atPath: sandbox.profileDirectory + "/work.json", contents: Data(profile.utf8), attributes: [.posixPermissions: 0o600]))
        var tokens = try await provider.issueTokens()
        tokens.expiresAt = Date().addingTimeInterval(-10)
        let keychain = try FileKeychain(directory: URL(fileURLWithPath: sandbox.store))
        try await keychain.inject(
            tokens, issuer: provider.issuer, clientID: "test-client", subject: "test-user", provider: provider.providerConfiguration,
            key: TokenStoreKey(service: "oidc", account: "work"))
        return (sandbox, tokens)
    }

    @Test("an RS256 ID token from the refresh of a --fapi2 profile is not kept (the login's own stays); without --fapi2 it is")
    func rs256RefreshedIDToken() async throws {
        try await withTestProvider { provider in
            for fapi2 in [true, false] {
                let (sandbox, tokens) = try await Self.setUp(provider, fapi2: fapi2)
                let result = try await sandbox.run(["token", "--profile", "work", "--force-refresh"])
                #expect(result.status == 0, "\(result.stderr)")
                let stored = try #require(try sandbox.storedLogin("work"))
                #expect(stored.tokens.accessToken != tokens.accessToken)
                if fapi2 {
                    #expect(stored.tokens.idToken == tokens.idToken, "an RS256 ID token was kept under --fapi2")
                } else {
                    #expect(stored.tokens.idToken != nil && stored.tokens.idToken != tokens.idToken)
                }
            }
        }
    }
}
