import Foundation
import OIDC
import OIDCTesting
import OIDCTestSupport
import Testing

/// `oidc resource-server` against glewlwyd 2.7.5's `at+jwt` access tokens (`aud` = the granted
/// scope, `api.read`; keys by discovery), fetched and sent by `oidc` itself: `oidc login --flow
/// client-credentials` and `oidc request`, plain from `swift-confidential` and DPoP-bound (through
/// the server's nonce challenge) from `swift-dpop`. Needs the `OIDC_GLEWLWYD_*` variables of
/// `scripts/glewlwyd.sh start`.
@Suite(
    "oidc resource-server with glewlwyd's tokens", .timeLimit(.scaledMinutes(4)), .glewlwydExclusive,
    .enabled(if: ProcessInfo.processInfo.environment["OIDC_GLEWLWYD_DPOP_CLIENT_ID"] != nil, "set OIDC_GLEWLWYD_* (scripts/glewlwyd.sh start)")
)
struct GlewlwydResourceServerCLITests {
    static let issuer = GlewlwydCLIInteropTests.issuer
    static let scope = GlewlwydCLIInteropTests.scope

    /// A client-credentials login of `client` (its secret file's variable prefix), DPoP-bound when asked.
    static func login(_ sandbox: LoginSandbox, prefix: String, profile: String, dpop: Bool = false) async throws {
        let login = try await sandbox.run([
            "login", "--flow", "client-credentials", "--issuer", issuer, "--client-id", try GlewlwydCLIInteropTests.variable(prefix + "_ID"),
            "--client-secret-file", try GlewlwydCLIInteropTests.variable(prefix + "_SECRET_FILE"), "--client-auth", "client_secret_basic",
            "--scope", scope, "--profile", profile,
        ] + (dpop ? ["--dpop"] : []))
        #expect(login.status == 0, "\(login.stderr)")
    }

    @Test("a plain token through oidc request: 200; tampered, for another audience, or judged an hour late: 401 invalid_token with the exact challenge")
    func bearer() async throws {
        let sandbox = LoginSandbox()
        try await Self.login(sandbox, prefix: "CONFIDENTIAL_CLIENT", profile: "ci")
        let server = try await ResourceServerProcess.start(["--issuer", Self.issuer, "--audience", Self.scope, "--require-scope", Self.scope])
        defer { server.process.signal(SIGKILL) }
        let request = try await sandbox.run(["request", "--profile", "ci", "--allow-host", "127.0.0.1", server.base + "/reports"])
        #expect(request.status == 0, "\(request.stderr)")
        let body = try #require(try JSONSerialization.jsonObject(with: Data(request.stdout.utf8)) as? [String: Any], "\(request.stdout)")
        #expect(body["token_type"] as? String == "Bearer")
        #expect(body["iss"] as? String == Self.issuer)
        #expect(body["client_id"] as? String == (try GlewlwydCLIInteropTests.variable("CONFIDENTIAL_CLIENT_ID")))
        #expect(body["scope"] as? String == Self.scope)

        let token = try await sandbox.run(["token", "--profile", "ci"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        var parts = token.split(separator: ".").map(String.init)
        let claims = try #require(Base64URLEncoding.decode(parts[1]))
        parts[1] = Base64URLEncoding.encode(Array(String(decoding: claims, as: UTF8.self).replacingOccurrences(of: "\"sub\":\"", with: "\"sub\":\"x").utf8))
        let tampered = try await server.send("GET", "/reports", headers: [("Authorization", "Bearer " + parts.joined(separator: "."))])
        let metadata = #"resource_metadata="\#(server.base)/.well-known/oauth-protected-resource""#
        #expect(tampered.status == 401)
        #expect(tampered.headers.values("WWW-Authenticate") == [
            #"Bearer error="invalid_token", error_description="The access token's signature does not verify.", "# + metadata,
            #"DPoP algs="\#(ResourceServerCommandTests.algs)", "# + metadata,
        ])

        let elsewhere = try await ResourceServerProcess.start(["--issuer", Self.issuer, "--audience", "https://other.example.com"])
        defer { elsewhere.process.signal(SIGKILL) }
        let other = try await elsewhere.send(headers: [("Authorization", "Bearer " + token)])
        #expect(other.status == 401)
        #expect(other.headers.values("WWW-Authenticate").first?.hasPrefix(#"Bearer error="invalid_token", error_description="The access token is not meant for this resource (aud).""#) == true)

        // glewlwyd's tokens live 3600 s: a server whose clock is two hours ahead finds this one expired.
        let later = try await ResourceServerProcess.start(["--issuer", Self.issuer, "--audience", Self.scope], environment: ["OIDC_TEST_CLOCK_OFFSET": "7200"])
        defer { later.process.signal(SIGKILL) }
        let expired = try await later.send(headers: [("Authorization", "Bearer " + token)])
        #expect(expired.status == 401)
        #expect(expired.headers.values("WWW-Authenticate").first?.hasPrefix(#"Bearer error="invalid_token", error_description="The access token has expired.""#) == true)

        let stopped = await server.stop()
        #expect(stopped.status == 0)
        #expect(stopped.stderr.contains("oidc: accepted GET /reports: Bearer token"), "\(stopped.stderr)")
        #expect(!stopped.stderr.contains(token))
        _ = await elsewhere.stop()
        _ = await later.stop()
    }

    @Test("a DPoP-bound token through oidc request, past the server's nonce challenge: 200 with cnf; a proof sent twice: 401 invalid_dpop_proof")
    func dpop() async throws {
        let sandbox = LoginSandbox()
        try await Self.login(sandbox, prefix: "DPOP_CLIENT", profile: "dp", dpop: true)
        let server = try await ResourceServerProcess.start(["--issuer", Self.issuer, "--audience", Self.scope, "--dpop", "required", "--nonce"])
        defer { server.process.signal(SIGKILL) }
        let request = try await sandbox.run(["request", "--profile", "dp", "--allow-host", "127.0.0.1", server.base + "/reports"])
        #expect(request.status == 0, "\(request.stderr)")
        let body = try #require(try JSONSerialization.jsonObject(with: Data(request.stdout.utf8)) as? [String: Any], "\(request.stdout)")
        #expect(body["token_type"] as? String == "DPoP")
        let jkt = try #require((body["cnf"] as? [String: String])?["jkt"])

        // oidc proof carries the nonce oidc request was given; the same proof twice is a replay.
        let token = try await sandbox.run(["token", "--profile", "dp"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let proof = try await sandbox.run(["proof", "--profile", "dp", "--method", "GET", "--url", server.base + "/reports"])
        #expect(proof.status == 0, "\(proof.stderr)")
        let headers = [("Authorization", "DPoP " + token), ("DPoP", proof.stdout.trimmingCharacters(in: .whitespacesAndNewlines))]
        let first = try await server.send("GET", "/reports", headers: headers)
        #expect(first.status == 200)
        #expect((first.json["cnf"] as? [String: String])?["jkt"] == jkt)
        let replayed = try await server.send("GET", "/reports", headers: headers)
        #expect(replayed.status == 401)
        #expect(replayed.headers.values("WWW-Authenticate").first?.hasPrefix(#"DPoP error="invalid_dpop_proof", error_description="The DPoP proof was used before"#) == true)
        let asBearer = try await server.send("GET", "/reports", headers: [("Authorization", "Bearer " + token)])
        #expect(asBearer.status == 401)

        let stopped = await server.stop()
        #expect(stopped.stderr.contains("(use_dpop_nonce)"), "\(stopped.stderr)")
        #expect(stopped.stderr.contains("(replayed_dpop_proof)"), "\(stopped.stderr)")
        #expect(!stopped.stderr.contains(token))
    }
}
