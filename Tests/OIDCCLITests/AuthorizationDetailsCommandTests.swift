import Foundation
import OIDC
import OIDCTesting
import OIDCTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `--authorization-details` (RFC 9396) on `oidc login`, and what the commands show of the details
/// granted: run as the built binary against TestProvider over loopback HTTP.
@Suite("oidc login --authorization-details (RFC 9396)", .timeLimit(.scaledMinutes(3)))
struct AuthorizationDetailsCommandTests {
    static let payment = #"[{"type":"payment_initiation","instructedAmount":{"currency":"EUR","amount":"123.50"},"creditorName":"Merchant A"}]"#

    static func provider() -> TestProvider.Configuration {
        var daemon = TestProvider.Client.confidential(id: "daemon", secret: ClientCredentialsCommandTests.secret)
        daemon.allowedScopes = ["reports"]
        var configuration = TestProvider.Configuration(clients: [.default, daemon])
        configuration.authorizationDetailsTypes = ["payment_initiation"]
        configuration.pushedAuthorizationRequests = .required
        return configuration
    }

    @Test("client credentials: sent, granted, shown by status and token --output authorization-details, asked again on renewal; another type is invalid_authorization_details (exit 4)")
    func clientCredentials() async throws {
        try await withTestProvider(Self.provider()) { provider in
            let sandbox = LoginSandbox()
            let secretFile = try ClientCredentialsCommandTests.privateFile(sandbox, "secret", ClientCredentialsCommandTests.secret)
            let arguments = ["login", "--flow", "client-credentials", "--issuer", provider.issuer, "--client-id", "daemon", "--client-secret-file", secretFile]
            let login = try await sandbox.run(arguments + ["--authorization-details", Self.payment, "--profile", "pay"])
            #expect(login.status == 0, "\(login.stderr)")
            let details = try AuthorizationDetails(json: Self.payment)
            #expect(try #require(await provider.tokenRequestParameters().last)["authorization_details"] == details.jsonText)

            let printed = try await sandbox.run(["token", "--profile", "pay", "--output", "authorization-details"])
            #expect(printed.status == 0, "\(printed.stderr)")
            #expect(try AuthorizationDetails(json: printed.stdout.trimmingCharacters(in: .newlines)) == details)
            let status = try await sandbox.run(["status", "--profile", "pay", "--output", "json"])
            let entry = try #require(try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any], "\(status.stdout)")
            let shown = try #require(entry["authorization_details"] as? [[String: Any]], "\(status.stdout)")
            #expect(shown.first?["type"] as? String == "payment_initiation" && shown.first?["creditorName"] as? String == "Merchant A")
            let text = try await sandbox.run(["status", "--profile", "pay"])
            #expect(text.stdout.contains("authorization details: payment_initiation"), "\(text.stdout)")
            let profile = try String(contentsOfFile: sandbox.profileDirectory + "/pay.json", encoding: .utf8)
            #expect(!profile.contains("payment_initiation"), "not remembered by the profile: \(profile)")

            try ClientCredentialsCommandTests.expire(sandbox, profile: "pay")
            let renewed = try await sandbox.run(["token", "--profile", "pay"])
            #expect(renewed.status == 0, "\(renewed.stderr)")
            #expect(try #require(await provider.tokenRequestParameters().last)["authorization_details"] == details.jsonText, "asked again")

            let other = try await sandbox.run(arguments + ["--authorization-details", #"[{"type":"account_information"}]"#, "--profile", "other"])
            #expect(other.status == 4, "\(other.stderr)")
            #expect(other.stderr.contains("invalid_authorization_details"), "\(other.stderr)")

            let none = try await sandbox.run(arguments + ["--profile", "plain"])
            #expect(none.status == 0, "\(none.stderr)")
            let missing = try await sandbox.run(["token", "--profile", "plain", "--output", "authorization-details"])
            #expect(missing.status == 4 && missing.stderr.contains("has no authorization_details"), "\(missing.stderr)")
        }
    }

    @Test("a browser login with @FILE: in the pushed authorization request; the tokens' details kept")
    func browserLogin() async throws {
        try await withTestProvider(Self.provider()) { provider in
            let sandbox = LoginSandbox()
            let file = sandbox.root.appendingPathComponent("details.json").path
            try Self.payment.write(toFile: file, atomically: false, encoding: .utf8)
            let login = try await sandbox.run([
                "login", "--issuer", provider.issuer, "--client-id", "test-client", "--authorization-details", "@" + file, "--profile", "bank",
            ])
            #expect(login.status == 0, "\(login.stderr)")
            let details = try AuthorizationDetails(json: Self.payment)
            #expect(try #require(await provider.requestParameters(.pushedAuthorization).last)["authorization_details"] == details.jsonText)
            #expect(try sandbox.storedLogin("bank")?.tokens.authorizationDetails == details)
        }
    }

    @Test("bad input exits 2 before any request: not JSON, not an array, no type, an empty array, a file over 64 KiB or missing, and the parameter given twice")
    func badInput() async throws {
        try await withTestProvider(Self.provider()) { provider in
            let sandbox = LoginSandbox()
            let big = sandbox.root.appendingPathComponent("big.json").path
            try ("[" + String(repeating: #"{"type":"payment_initiation"},"#, count: 3000) + #"{"type":"payment_initiation"}]"#)
                .write(toFile: big, atomically: false, encoding: .utf8)
            let base = ["login", "--issuer", provider.issuer, "--client-id", "test-client", "--profile", "x"]
            for (value, named) in [
                ("not json", "not valid JSON"), (#"{"type":"payment_initiation"}"#, "array"), (#"[{"amount":1}]"#, "type"), ("[]", "empty"),
                ("@" + big, "64 KiB"), ("@" + sandbox.root.appendingPathComponent("missing.json").path, "cannot read"),
            ] {
                let result = try await sandbox.run(base + ["--authorization-details", value])
                #expect(result.status == 2, "\(value.prefix(30)): \(result.stderr)")
                #expect(result.stderr.contains("--authorization-details") && result.stderr.contains(named), "\(value.prefix(30)): \(result.stderr)")
            }
            let twice = try await sandbox.run(base + ["--authorization-details", Self.payment, "--param", "authorization_details=[]"])
            #expect(twice.status == 2 && twice.stderr.contains("give the details once"), "\(twice.stderr)")
            #expect(await provider.requestCount(.pushedAuthorization) == 0)
            #expect(await provider.requestCount(.token) == 0)
        }
    }
}
