import Foundation
import OIDC
import OIDCTesting
import OIDCTestSupport
import Testing

/// `oidc login --resource URL` against glewlwyd 2.7.5's `oidc-dcr` issuer (open RFC 7591
/// registration with RFC 7592 management, RFC 8707 resource indicators for exactly one resource,
/// `OIDC_GLEWLWYD_DCR_RESOURCE_URL`; docs/glewlwyd.md), with `oidc resource-server` as that
/// resource, its RFC 9728 metadata naming the issuer. From the URL alone, no issuer and no client
/// id: a registration glewlwyd made, alice's code-flow login (the test user agent as the browser),
/// a token whose `aud` is the resource (glewlwyd's `aud` is the scope list unless it took `resource`),
/// `oidc request` answered 200, forced refreshes that send the stored resource, a second profile on
/// the same registration, and glewlwyd's own refusal of a resource it does not list.
///
/// glewlwyd 2.7.5 stores a client registered with `token_endpoint_auth_method` `none` alone as
/// confidential (without a secret) and refuses its token requests; the registration oidc sends
/// also says `client_confidential: false`, glewlwyd's own member, so this login needs no admin.
@Suite(
    "oidc login --resource against glewlwyd", .timeLimit(.scaledMinutes(4)), .glewlwydExclusive,
    .enabled(if: ProcessInfo.processInfo.environment["OIDC_GLEWLWYD_DCR_ISSUER"] != nil, "set OIDC_GLEWLWYD_* (scripts/glewlwyd.sh start): its oidc-dcr issuer")
)
struct GlewlwydResourceLoginTests {
    static let scope = GlewlwydCLIInteropTests.scope
    /// The test user agent as the browser of a code-flow login: it follows oidc's start URL, signs
    /// alice in, grants, and sends the redirect to oidc's loopback callback.
    static let agent =
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("scripts/glewlwyd-agent.py").path + " authorize --deliver"

    static func variable(_ name: String) throws -> String { try GlewlwydCLIInteropTests.variable(name) }

    /// The claims of a JWT (its payload), as JSON.
    static func claims(_ token: String) throws -> [String: Any] {
        let parts = token.split(separator: ".")
        let payload = try #require(parts.count == 3 ? Base64URLEncoding.decode(String(parts[1])) : nil, "not a JWT")
        return try #require(try JSONSerialization.jsonObject(with: Data(payload)) as? [String: Any])
    }

    /// The access token `oidc token` prints for `profile` (with `extra` arguments such as `--force-refresh`).
    static func accessToken(_ sandbox: LoginSandbox, _ profile: String, _ extra: [String] = []) async throws -> (token: String, stderr: String) {
        let result = try await sandbox.run(["token", "--profile", profile] + extra)
        #expect(result.status == 0, "\(result.stderr)")
        return (result.stdout.trimmingCharacters(in: .whitespacesAndNewlines), result.stderr)
    }

    /// RFC 7592 §2.1: glewlwyd's own view of the client, read with the registration access token.
    static func readRegistration(_ registration: ClientRegistration) async throws -> [String: Any] {
        let uri = try #require(registration.registrationClientURI, "glewlwyd's answer has registration_client_uri (RFC 7592 on)")
        let token = try #require(registration.registrationAccessToken?.revealedValue)
        let response = try await withNIOHTTPTransport { transport in
            try await transport.send(HTTPRequest(url: uri, headers: ["Authorization": "Bearer \(token)"]))
        }
        #expect(response.status == 200)
        return try #require(try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any])
    }

    @Test("from the resource's URL alone: registered at glewlwyd, alice logged in, aud the resource, request 200, refreshes send the resource, a second profile reuses the registration, an unlisted resource refused by glewlwyd")
    func loginFromResource() async throws {
        let issuer = try Self.variable("DCR_ISSUER"), resource = try Self.variable("DCR_RESOURCE_URL")
        let server = try await ResourceServerProcess.start([
            "--issuer", issuer, "--audience", resource, "--port", try Self.variable("DCR_RESOURCE_PORT"), "--require-scope", Self.scope,
        ])
        defer { server.process.signal(SIGKILL) }
        #expect(server.base == resource, "glewlwyd lists exactly \(resource) (port included)")
        let sandbox = LoginSandbox()

        let login = try await sandbox.run(["login", "--resource", resource, "--profile", "gw", "--browser", Self.agent, "--timeout", "60"])
        #expect(login.status == 0, "\(login.stderr)")
        let registration = try #require(try await ResourceLoginCommandTests.registration(sandbox, issuer), "\(login.stderr)")
        let port = try #require(registration.callbackPort)
        #expect(registration.clientSecret == nil)
        // glewlwyd made the client oidc asked for: public, loopback redirect on the kept port, code and refresh.
        let made = try await Self.readRegistration(registration)
        #expect(made["client_id"] as? String == registration.clientID)
        #expect(made["redirect_uris"] as? [String] == ["http://127.0.0.1:\(port)/callback"], "\(made)")
        // glewlwyd's RFC 7592 answer has the method as an array, where RFC 7591 §2 has a string.
        #expect(made["token_endpoint_auth_method"] as? [String] == ["none"] || made["token_endpoint_auth_method"] as? String == "none", "\(made)")
        #expect(Set(made["grant_types"] as? [String] ?? []).isSuperset(of: ["authorization_code", "refresh_token"]), "\(made)")
        #expect(made["client_name"] as? String == "oidc", "\(made)")

        let stored = try #require(try sandbox.storedLogin("gw"))
        #expect(stored.resource == resource && stored.issuer == issuer && stored.clientID == registration.clientID)
        #expect(stored.tokens.scopes.contains(Self.scope), "\(stored.tokens.scopes)")
        ResourceLoginCommandTests.expectNothingSecret(login.stderr, registration, stored, "login's stderr")
        // glewlwyd's aud is the resource it was given (without one it is the scope list, "api.read").
        let first = try await Self.accessToken(sandbox, "gw")
        #expect(try Self.claims(first.token)["aud"] as? String == resource)

        let request = try await sandbox.run(["request", "--profile", "gw", server.base + "/reports"])
        #expect(request.status == 0, "\(request.stderr)")
        let body = try GlewlwydCLIInteropTests.json(request.stdout)
        #expect(body["aud"] as? [String] == [resource] && body["client_id"] as? String == registration.clientID, "\(body)")
        #expect(body["iss"] as? String == issuer && body["token_type"] as? String == "Bearer", "\(body)")

        // A forced refresh sends the stored resource, which glewlwyd accepts (it refuses any other:
        // resource-change-allowed is off): a new token, still for the resource, no retry.
        let refreshed = try await Self.accessToken(sandbox, "gw", ["--force-refresh", "-v"])
        #expect(refreshed.token != first.token)
        #expect(try Self.claims(refreshed.token)["aud"] as? String == resource)
        #expect(!refreshed.stderr.contains("invalid_target"), "\(refreshed.stderr)")
        let again = try await sandbox.run(["request", "--profile", "gw", server.base + "/reports"])
        #expect(again.status == 0, "\(again.stderr)")

        // What the refresh sends is the stored resource: a copy of the login whose resource says
        // another URL gets glewlwyd's invalid_target on the refresh, then oidc's one retry without it.
        let other = resource + "/other"
        var probe = stored
        probe.resource = other
        try FileKeychain(directory: URL(fileURLWithPath: sandbox.store)).save(probe, for: TokenStoreKey(service: "oidc", account: "probe"))
        let profile = try String(contentsOfFile: sandbox.profileDirectory + "/gw.json", encoding: .utf8)
        #expect(profile.contains(#""\#(resource)""#), "\(profile)")
        try profile.replacingOccurrences(of: #""\#(resource)""#, with: #""\#(other)""#)
            .write(toFile: sandbox.profileDirectory + "/probe.json", atomically: true, encoding: .utf8)
        let probed = try await Self.accessToken(sandbox, "probe", ["--force-refresh", "-v"])
        #expect(probed.stderr.contains("the provider refused resource on a refresh (invalid_target); trying once without it"), "\(probed.stderr)")
        #expect(try Self.claims(probed.token)["aud"] as? String == resource, "glewlwyd keeps the grant's resource when none is sent")

        let second = try await sandbox.run(["login", "--resource", resource, "--profile", "second", "--browser", Self.agent, "--timeout", "60"])
        #expect(second.status == 0, "\(second.stderr)")
        #expect(try sandbox.storedLogin("second")?.clientID == registration.clientID)
        #expect(try await ResourceLoginCommandTests.registration(sandbox, issuer)?.clientID == registration.clientID)
        let secondRequest = try await sandbox.run(["request", "--profile", "second", server.base + "/reports"])
        #expect(secondRequest.status == 0, "\(secondRequest.stderr)")

        // A resource glewlwyd does not list (any other port): its authorization endpoint answers
        // invalid_target, which oidc reports; nothing is stored.
        let unlisted = try await ResourceServerProcess.start(["--issuer", issuer, "--audience", "unlisted", "--require-scope", Self.scope])
        defer { unlisted.process.signal(SIGKILL) }
        let refused = try await sandbox.run(["login", "--resource", unlisted.base, "--profile", "unlisted", "--browser", Self.agent, "--timeout", "60"])
        #expect(refused.status == 4, "\(refused.stderr)")
        #expect(refused.stderr.contains("invalid_target"), "\(refused.stderr)")
        #expect(try sandbox.storedLogin("unlisted") == nil)
        _ = await unlisted.stop()

        let stopped = await server.stop()
        #expect(stopped.stderr.contains("oidc: accepted GET /reports: Bearer token of client \(registration.clientID)"), "\(stopped.stderr)")
        #expect(!stopped.stderr.contains(first.token) && !stopped.stderr.contains(refreshed.token))
    }
}
