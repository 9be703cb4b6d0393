import Foundation
import OIDC
import OIDCTesting
import OIDCTestSupport
import Testing

/// `oidc login --jarm` (signed authorization responses), run as the built binary against
/// TestProvider with the test browser.
@Suite("oidc login --jarm", .timeLimit(.scaledMinutes(2)))
struct JARMCommandTests {
    static func provider(_ fault: TestProvider.SignedResponseFault? = nil, offered: Bool = true) -> TestProvider.Configuration {
        var configuration = TestProvider.Configuration()
        configuration.signedResponseFault = fault
        configuration.signedResponses = offered ? .offered : .notOffered
        return configuration
    }

    @Test("--jarm asks for response_mode=jwt and logs in through the signed response; remembered by the profile; --no-jarm stops it")
    func jarmRemembered() async throws {
        try await withTestProvider(Self.provider()) { provider in
            let sandbox = LoginSandbox()
            let first = try await sandbox.run(LoginCommandTests.loginArguments(provider) + ["--jarm"])
            #expect(first.status == 0, "\(first.stderr)")
            #expect(await provider.requestParameters(.authorize).last?["response_mode"] == "jwt")
            #expect(try sandbox.storedLogin("work")?.subject == "test-user")
            let profile = try String(contentsOfFile: sandbox.profileDirectory + "/work.json", encoding: .utf8)
            #expect(profile.contains(#""jarm" : true"#), "\(profile)")

            let again = try await sandbox.run(["login", "--profile", "work", "--par"])
            #expect(again.status == 0, "\(again.stderr)")
            #expect(await provider.requestParameters(.pushedAuthorization).last?["response_mode"] == "jwt")

            let plain = try await sandbox.run(["login", "--profile", "work", "--no-jarm", "--no-par"])
            #expect(plain.status == 0, "\(plain.stderr)")
            #expect(await provider.requestParameters(.authorize).last?["response_mode"] == nil)
            #expect(try !String(contentsOfFile: sandbox.profileDirectory + "/work.json", encoding: .utf8).contains(#""jarm""#))
            #expect(await provider.grantCount("authorization_code") == 3)
        }
    }

    @Test("a plain code where --jarm asked for a signed response: exit 4, the downgrade named, nothing stored")
    func downgrade() async throws {
        try await withTestProvider(Self.provider(.plainCode)) { provider in
            let sandbox = LoginSandbox()
            let login = try await sandbox.run(LoginCommandTests.loginArguments(provider) + ["--jarm"])
            #expect(login.status == 4, "\(login.stderr)")
            #expect(login.stderr.contains("downgrade"), "\(login.stderr)")
            #expect(try sandbox.storedLogin("work") == nil)
            #expect(await provider.grantCount("authorization_code") == 0)
        }
    }

    @Test("--jarm at a provider that does not offer it: exit 2 before the browser opens, naming response_mode")
    func notOffered() async throws {
        try await withTestProvider(Self.provider(offered: false)) { provider in
            let sandbox = LoginSandbox()
            let login = try await sandbox.run(LoginCommandTests.loginArguments(provider) + ["--jarm"])
            #expect(login.status == 2, "\(login.stderr)")
            #expect(login.stderr.contains("response_mode=jwt"), "\(login.stderr)")
            #expect(await provider.requestCount(.authorize) == 0)
        }
    }
}
