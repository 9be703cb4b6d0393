import Foundation
import OIDC
import OIDCTesting
import OIDCTestSupport
import Testing

/// Step-up by authentication strength (RFC 9470) from the terminal: an API's 401
/// `insufficient_user_authentication` makes `oidc request` exit 4 naming the login that asks for
/// it, without a refresh; that login sends `acr_values` and `max_age` and refuses (exit 4) an ID
/// token whose `acr` or `auth_time` does not meet them. Against TestProvider over loopback HTTP.
@Suite("oidc request and login: step-up by authentication strength (RFC 9470)", .timeLimit(.scaledMinutes(3)))
struct StepUpAuthenticationCommandTests {
    @Test("a 401 insufficient_user_authentication: exit 4 naming oidc login --acr-values --max-age, no refresh; that login refuses another acr or an old auth_time, and passes once they are met")
    func stepUp() async throws {
        try await withTestProvider { provider in
            var user = await provider.user
            user.acr = "urn:bank:password"
            await provider.setUser(user)
            let api = try await LoopbackHTTPService.start(host: "127.0.0.1", port: 0, maximumBodySize: 1024) { _ in
                LoopbackHTTPService.Response(
                    status: 401,
                    headers: [
                        ("WWW-Authenticate", #"Bearer error="insufficient_user_authentication", error_description="A different authentication level is required", acr_values="urn:bank:sca", max_age="300""#),
                        ("Content-Type", "application/json"),
                    ],
                    body: Array(#"{"error":"insufficient_user_authentication"}"#.utf8))
            }
            defer { Task { try? await api.shutdown() } }
            let sandbox = LoginSandbox()
            let login = try await sandbox.run(["login", "--issuer", provider.issuer, "--client-id", "test-client", "--profile", "bank"])
            #expect(login.status == 0, "\(login.stderr)")
            let tokenRequests = await provider.requestCount(.token)

            let refused = try await sandbox.run(["request", "http://127.0.0.1:\(api.port)/payments", "--allow-host", "127.0.0.1", "--profile", "bank"])
            #expect(refused.status == 4, "\(refused.stderr)")
            let command = "oidc login --profile bank --acr-values 'urn:bank:sca' --max-age 300"
            #expect(refused.stderr.contains("HTTP 401"), "\(refused.stderr)")
            #expect(refused.stderr.contains("asking for acr_values 'urn:bank:sca' and max_age 300 s. Log in for it with: \(command)"), "\(refused.stderr)")
            #expect(await provider.requestCount(.token) == tokenRequests, "no refresh")

            // The named login: sent with acr_values and max_age; the provider's acr is still the weak one: exit 4, nothing replaced.
            let before = try #require(try sandbox.storedLogin("bank"))
            let arguments = ["login", "--profile", "bank", "--acr-values", "urn:bank:sca", "--max-age", "300"]
            let weak = try await sandbox.run(arguments)
            #expect(weak.status == 4, "\(weak.stderr)")
            #expect(weak.stderr.contains("acr"), "\(weak.stderr)")
            let sent = try #require(await provider.requestParameters(.authorize).last)
            #expect(sent["acr_values"] == "urn:bank:sca" && sent["max_age"] == "300")
            #expect(try sandbox.storedLogin("bank")?.tokens.accessToken == before.tokens.accessToken, "the old login stays")

            // The right acr, but an authentication 1000 s old (the provider's clock behind): auth_time too old, exit 4.
            user.acr = "urn:bank:sca"
            await provider.setUser(user)
            await provider.advanceClock(by: -1000)
            let stale = try await sandbox.run(arguments)
            #expect(stale.status == 4, "\(stale.stderr)")
            #expect(stale.stderr.contains("max_age"), "\(stale.stderr)")

            await provider.advanceClock(by: 1000)
            let strong = try await sandbox.run(arguments)
            #expect(strong.status == 0, "\(strong.stderr)")
            let stored = try #require(try sandbox.storedLogin("bank"))
            #expect(stored.tokens.accessToken != before.tokens.accessToken)
        }
    }
}
