import Foundation
import OIDC
import OIDCTesting
import OIDCTestSupport
import Testing

/// `oidc resource-server`, the real binary on loopback: tokens from a test key (`--jwks FILE`) and
/// from TestProvider (its published keys, found by discovery), sent as bearer and DPoP tokens; every
/// refusal with its exact challenge and one line on stderr that never holds the token.
@Suite("oidc resource-server", .timeLimit(.scaledMinutes(2)))
struct ResourceServerCommandTests {
    static let algs = "RS256 RS384 RS512 PS256 PS384 PS512 ES256 ES384 ES512 EdDSA Ed25519"

    @Test("usage errors name the flag and exit 2", arguments: [
        (["--host", "0.0.0.0"], "--host"), (["--port", "70000"], "--port"), (["--dpop", "sometimes"], "--dpop"),
        (["--dpop", "off", "--nonce"], "--nonce"), (["--introspect"], "--introspect"), (["--client-id", "x"], "--client-id"),
        (["--require-scope", "a\"b"], "--require-scope"), (["--issuer", "ftp://idp.example"], "--issuer"),
        (["--audience", "two words"], "--audience"), (["--jwks", "/nonexistent.json"], "--jwks"),
        (["--require-acr", "two words"], "--require-acr"), (["--max-age", "-1"], "--max-age"),
    ])
    func usage(arguments: [String], flag: String) async throws {
        var all = ["--issuer", AccessTokenIssuer.issuer, "--audience", AccessTokenIssuer.audience, "--jwks", "/dev/null"]
        for index in stride(from: 0, to: arguments.count, by: 1) where arguments[index].hasPrefix("--") {
            if let existing = all.firstIndex(of: arguments[index]) { all.removeSubrange(existing...existing + 1) }
        }
        let result = try await ResourceServerProgram.run(all + arguments, timeout: .scaled(.seconds(20)))
        #expect(result.status == 2, "\(result.stderr)")
        #expect(result.stderr.contains(flag), "\(result.stderr)")
        #expect(result.stdout.isEmpty)
    }

    @Test("--require-acr and --max-age (RFC 9470): a token without the acr, or authenticated too long ago, gets 401 insufficient_user_authentication naming acr_values and max_age; one that meets both gets 200, its authorization_details (RFC 9396) in the body")
    func stepUp() async throws {
        let tokens = try AccessTokenIssuer()
        let server = try await ResourceServerProcess.start(tokens.arguments + ["--require-acr", "urn:bank:sca", "--max-age", "300"])
        defer { server.process.signal(SIGKILL) }
        let now = Int(Date().timeIntervalSince1970)
        let weak = try await server.send(headers: [("Authorization", "Bearer " + (try tokens.token(["acr": "urn:bank:password", "auth_time": now])))])
        #expect(weak.status == 401)
        #expect(weak.headers.values("WWW-Authenticate").first == #"Bearer error="insufficient_user_authentication", error_description="A different authentication level is required: the access token's acr is not one of acr_values.", acr_values="urn:bank:sca", max_age="300", resource_metadata="\#(server.base)/.well-known/oauth-protected-resource""#)
        #expect(weak.json["error"] as? String == "insufficient_user_authentication")
        let stale = try await server.send(headers: [("Authorization", "Bearer " + (try tokens.token(["acr": "urn:bank:sca", "auth_time": now - 3600])))])
        #expect(stale.status == 401 && stale.headers.values("WWW-Authenticate").first?.contains("More recent authentication is required") == true)
        // RFC 9396: the token's authorization_details echoed in the 200 body.
        let details: [[String: Any]] = [["type": "payment_initiation", "instructedAmount": ["currency": "EUR", "amount": "123.50"]]]
        let strong = try await server.send(headers: [
            ("Authorization", "Bearer " + (try tokens.token(["acr": "urn:bank:sca", "auth_time": now - 10, "authorization_details": details]))),
        ])
        #expect(strong.status == 200)
        let echoed = try #require(strong.json["authorization_details"] as? [[String: Any]])
        #expect(echoed.first?["type"] as? String == "payment_initiation")
        #expect((echoed.first?["instructedAmount"] as? [String: Any])?["amount"] as? String == "123.50")
        let stopped = await server.stop(SIGTERM)
        #expect(stopped.stderr.contains("(insufficient_user_authentication)"), "\(stopped.stderr)")
    }

    @Test("--require-detail-type (RFC 9396): a token without a detail of that type gets 403 insufficient_scope; one with it gets 200, the detail echoed")
    func requiredDetailType() async throws {
        let tokens = try AccessTokenIssuer()
        let server = try await ResourceServerProcess.start(tokens.arguments + ["--require-detail-type", "payment_initiation"])
        defer { server.process.signal(SIGKILL) }
        let plain = try await server.send(headers: [("Authorization", "Bearer " + (try tokens.token([:])))])
        #expect(plain.status == 403 && plain.json["error"] as? String == "insufficient_scope")
        #expect(plain.headers.values("WWW-Authenticate").first?.contains("payment_initiation (RFC 9396)") == true, "\(plain.headers)")
        let details: [[String: Any]] = [["type": "payment_initiation", "instructedAmount": ["currency": "EUR", "amount": "9.99"]]]
        let paying = try await server.send(headers: [("Authorization", "Bearer " + (try tokens.token(["authorization_details": details])))])
        #expect(paying.status == 200)
        #expect((paying.json["authorization_details"] as? [[String: Any]])?.first?["type"] as? String == "payment_initiation")
        // oidc request names the resource's reason, not a --scope it cannot name.
        let store = TokenCommandTests.temporaryStore()
        let injected = try await OIDCBinary.run(
            ["inject", "--store", store, "--profile", "rar", "--issuer", AccessTokenIssuer.issuer, "--client-id", "my-cli", "--access-token", "-", "--expires-in", "600"],
            stdin: try tokens.token([:]))
        #expect(injected.status == 0, "\(injected.stderr)")
        let request = try await OIDCBinary.run(["request", "--store", store, "--profile", "rar", "--allow-host", "127.0.0.1", server.base + "/pay"])
        #expect(request.status == 4, "\(request.stderr)")
        #expect(request.stderr.contains("payment_initiation (RFC 9396)") && request.stderr.contains("--authorization-details"), "\(request.stderr)")
        let stopped = await server.stop(SIGTERM)
        #expect(stopped.stderr.contains("(missing_authorization_detail)"), "\(stopped.stderr)")
    }

    @Test("GET /.well-known/oauth-protected-resource is the RFC 9728 document; SIGTERM stops the server with 0")
    func metadata() async throws {
        let tokens = try AccessTokenIssuer()
        let server = try await ResourceServerProcess.start(tokens.arguments + ["--dpop", "required", "--require-scope", "read"])
        defer { server.process.signal(SIGKILL) }
        #expect(server.base.hasPrefix("http://127.0.0.1:"))
        let response = try await server.send("GET", "/.well-known/oauth-protected-resource")
        #expect(response.status == 200)
        let document = response.json
        #expect(document["resource"] as? String == server.base)
        #expect(document["authorization_servers"] as? [String] == [AccessTokenIssuer.issuer])
        #expect(document["bearer_methods_supported"] as? [String] == ["header"])
        #expect(document["scopes_supported"] as? [String] == ["read"])
        #expect((document["dpop_signing_alg_values_supported"] as? [String])?.contains("ES256") == true)
        #expect(document["dpop_bound_access_tokens_required"] as? Bool == true)
        let stopped = await server.stop(SIGTERM)
        #expect(stopped.status == 0, "\(stopped.stderr)")
        #expect(stopped.stderr.contains("resource server stopped"))
    }

    @Test("the URL a proof names is the printed one: two Host fields and a target for another host are 400 invalid_request; Host and X-Forwarded-Host never move it")
    func addressedURL() async throws {
        let tokens = try AccessTokenIssuer()
        let server = try await ResourceServerProcess.start(tokens.arguments)
        defer { server.process.signal(SIGKILL) }
        let key = try DPoPKey.generate()
        let token = try tokens.token(boundTo: key)
        func proved() throws -> [RawHTTPClient.Header] {
            let proof = try key.proof(method: "GET", url: try #require(URL(string: server.base + "/me")), accessToken: Secret(token))
            return [RawHTTPClient.Header(name: "Authorization", value: "DPoP " + token), RawHTTPClient.Header(name: "DPoP", value: proof)]
        }
        let twoHosts = try await RawHTTPClient.send("GET", server.base + "/me", headers: try proved() + [RawHTTPClient.Header(name: "Host", value: "evil.example")])
        #expect(twoHosts.status == 400, "\(twoHosts.status)")
        #expect(try twoHosts.json()["error"] as? String == "invalid_request")
        let port = try #require(URL(string: server.base)?.port)
        let elsewhere = try await RawHTTPClient.exchange("127.0.0.1", port, RawHTTPClient.request("GET", "http://evil.example/me", host: "127.0.0.1:\(port)"))
        // Refused as the target it is; or, where the framework does not hand it over as received
        // (Hummingbird, Vapor), judged on a path of this host: no token, 401. Never a URL on evil.example.
        #expect(elsewhere.status == (ResourceServerProgram.keepsAbsoluteFormTarget ? 400 : 401), "\(elsewhere.status)")
        // One Host naming another name, and forwarding headers: the proof for the printed URL still holds.
        let forwarded = try proved() + [RawHTTPClient.Header(name: "X-Forwarded-Host", value: "evil.example"), RawHTTPClient.Header(name: "Forwarded", value: "host=evil.example")]
        #expect(try await RawHTTPClient.send("GET", server.base + "/me", headers: forwarded).status == 200)
        let stopped = await server.stop(SIGTERM)
        #expect(stopped.stderr.contains("(malformed_host)") && stopped.stderr.contains(ResourceServerProgram.keepsAbsoluteFormTarget ? "(malformed_request_target)" : "(missing_token)"), "\(stopped.stderr)")
        #expect(!stopped.stderr.contains(token))
    }

    @Test("a bearer token is accepted: 200 with sub, client_id, scope, token_type, iss, aud, exp; SIGINT stops with 130")
    func bearer() async throws {
        let tokens = try AccessTokenIssuer()
        let server = try await ResourceServerProcess.start(tokens.arguments + ["--require-scope", "read"])
        defer { server.process.signal(SIGKILL) }
        let token = try tokens.token()
        let response = try await server.send(headers: [("Authorization", "Bearer " + token)])
        #expect(response.status == 200, "\(String(decoding: response.body, as: UTF8.self))")
        let body = response.json
        #expect(body["sub"] as? String == "alice")
        #expect(body["client_id"] as? String == "my-cli")
        #expect(body["scope"] as? String == "read write")
        #expect(body["token_type"] as? String == "Bearer")
        #expect(body["iss"] as? String == AccessTokenIssuer.issuer)
        #expect(body["aud"] as? [String] == [AccessTokenIssuer.audience])
        #expect(body["exp"] as? Int != nil)
        #expect(body["cnf"] == nil)
        let stopped = await server.stop(SIGINT)
        #expect(stopped.status == 130)
        #expect(stopped.stderr.contains("oidc: accepted GET /me: Bearer token of client my-cli for subject alice"), "\(stopped.stderr)")
        #expect(!stopped.stderr.contains(token))
    }

    @Test("a DPoP-bound token with its proof is accepted with cnf; the same proof again is refused as replayed")
    func dpop() async throws {
        let tokens = try AccessTokenIssuer()
        let server = try await ResourceServerProcess.start(tokens.arguments)
        defer { server.process.signal(SIGKILL) }
        let key = try DPoPKey.generate()
        let token = try tokens.token(boundTo: key)
        let proof = try key.proof(method: "GET", url: server.url("/orders?page=2"), accessToken: Secret(token))
        let headers = [("Authorization", "DPoP " + token), ("DPoP", proof)]
        let accepted = try await server.send("GET", "/orders?page=2", headers: headers)
        #expect(accepted.status == 200)
        #expect(accepted.json["token_type"] as? String == "DPoP")
        #expect(accepted.json["cnf"] as? [String: String] == ["jkt": key.thumbprint])

        let replayed = try await server.send("GET", "/orders?page=2", headers: headers)
        #expect(replayed.status == 401)
        #expect(replayed.headers.values("WWW-Authenticate") == [
            #"DPoP error="invalid_dpop_proof", error_description="The DPoP proof was used before: a proof is good for one request.", algs="\#(Self.algs)", resource_metadata="\#(server.base)/.well-known/oauth-protected-resource""#,
            #"Bearer resource_metadata="\#(server.base)/.well-known/oauth-protected-resource""#,
        ])
        // The bound token as a bearer token: refused, DPoP challenged.
        let downgraded = try await server.send(headers: [("Authorization", "Bearer " + token)])
        #expect(downgraded.status == 401)
        #expect(downgraded.headers.values("WWW-Authenticate").first?.hasPrefix(#"DPoP error="invalid_token""#) == true)
        let stopped = await server.stop()
        #expect(stopped.stderr.contains("oidc: refused GET /orders: 401 invalid_dpop_proof (replayed_dpop_proof): The DPoP proof was used before"), "\(stopped.stderr)")
        #expect(!stopped.stderr.contains(token) && !stopped.stderr.contains(proof))
    }

    @Test("refusals carry the exact challenge: tampered, expired, another audience, a missing scope, no token (with the route's scopes, no error code), two Authorization fields")
    func refusals() async throws {
        let tokens = try AccessTokenIssuer()
        let server = try await ResourceServerProcess.start(tokens.arguments + ["--dpop", "off", "--require-scope", "read", "--require-scope", "admin"])
        defer { server.process.signal(SIGKILL) }
        let metadata = #"resource_metadata="\#(server.base)/.well-known/oauth-protected-resource""#
        func challenge(_ error: String, _ description: String, scope: String? = nil) -> String {
            #"Bearer error="\#(error)", error_description="\#(description)", "# + (scope.map { #"scope="\#($0)", "# } ?? "") + metadata
        }
        let good = try tokens.token(["scope": "read admin"])
        var parts = good.split(separator: ".").map(String.init)
        parts[1] = Base64URLEncoding.encode(Array(#"{"iss":"https://login.example.com","aud":"https://api.example.com","sub":"mallory","client_id":"x","iat":1,"jti":"j","exp":9999999999,"scope":"read admin"}"#.utf8))
        let tampered = parts.joined(separator: ".")
        let cases: [(String, [(String, String)], Int, String)] = [
            ("tampered", [("Authorization", "Bearer " + tampered)], 401, challenge("invalid_token", "The access token's signature does not verify.")),
            ("expired", [("Authorization", "Bearer " + (try tokens.token(["scope": "read admin", "exp": Int(Date().timeIntervalSince1970) - 3600])))], 401,
                challenge("invalid_token", "The access token has expired.")),
            ("audience", [("Authorization", "Bearer " + (try tokens.token(["scope": "read admin", "aud": "https://other.example.com"])))], 401,
                challenge("invalid_token", "The access token is not meant for this resource (aud).")),
            ("scope", [("Authorization", "Bearer " + (try tokens.token(["scope": "read"])))], 403,
                challenge("insufficient_scope", "The access token lacks a scope this request requires.", scope: "admin read")),
            ("none", [], 401, #"Bearer scope="admin read", "# + metadata),
            ("twice", [("Authorization", "Bearer " + good), ("Authorization", "Bearer " + good)], 400, ""),
        ]
        for (name, headers, status, expected) in cases {
            let response = try await server.send(headers: headers)
            #expect(response.status == status, "\(name)")
            let challenges = response.headers.values("WWW-Authenticate")
            if name == "twice" {
                #expect(challenges.first?.hasPrefix(#"Bearer error="invalid_request""#) == true, "\(challenges)")
            } else {
                #expect(challenges == [expected], "\(name)")
            }
            #expect(response.headers["Cache-Control"] == "no-store", "\(name)")
        }
        let stopped = await server.stop()
        #expect(stopped.status == 0)
        for line in ["401 invalid_token (invalid_signature)", "401 invalid_token (token_expired)", "401 invalid_token (audience_mismatch)",
                     "403 insufficient_scope (insufficient_scope)", "401 (missing_token)", "400 invalid_request (duplicate_authorization)"] {
            #expect(stopped.stderr.contains("oidc: refused GET /me: " + line), "\(line) in \(stopped.stderr)")
        }
        for token in [good, tampered] { #expect(!stopped.stderr.contains(token)) }
    }

    @Test("--nonce: a proof without the server's nonce gets use_dpop_nonce and a DPoP-Nonce; with it, 200")
    func nonce() async throws {
        let tokens = try AccessTokenIssuer()
        let server = try await ResourceServerProcess.start(tokens.arguments + ["--dpop", "required", "--nonce"])
        defer { server.process.signal(SIGKILL) }
        let key = try DPoPKey.generate()
        let token = try tokens.token(boundTo: key)
        let first = try await server.send(headers: [("Authorization", "DPoP " + token), ("DPoP", try key.proof(method: "GET", url: server.url("/me"), accessToken: Secret(token)))])
        #expect(first.status == 401)
        let nonce = try #require(first.headers["DPoP-Nonce"])
        #expect(first.headers.values("WWW-Authenticate") == [
            #"DPoP error="use_dpop_nonce", error_description="The DPoP proof needs the server's nonce (DPoP-Nonce).", algs="\#(Self.algs)", resource_metadata="\#(server.base)/.well-known/oauth-protected-resource""#,
        ])
        let second = try await server.send(headers: [
            ("Authorization", "DPoP " + token), ("DPoP", try key.proof(method: "GET", url: server.url("/me"), accessToken: Secret(token), nonce: nonce)),
        ])
        #expect(second.status == 200)
        #expect(second.json["token_type"] as? String == "DPoP")
        let stopped = await server.stop()
        #expect(stopped.stderr.contains("oidc: refused GET /me: 401 use_dpop_nonce (use_dpop_nonce)"), "\(stopped.stderr)")
    }

    @Test("TestProvider's JWT access tokens, its keys found by discovery; --host ::1 prints a bracketed URL",
          .enabled(if: Self.hasIPv6Loopback, "no ::1 here"))
    func testProviderIPv6() async throws {
        try await withTestProvider { provider in
            let server = try await ResourceServerProcess.start(["--issuer", provider.issuer, "--audience", "https://api.example.com", "--host", "::1"])
            defer { server.process.signal(SIGKILL) }
            #expect(server.base.hasPrefix("http://[::1]:"))
            let token = try await provider.issueJWTAccessToken(audience: "https://api.example.com", scope: "openid read")
            let response = try await server.send(headers: [("Authorization", "Bearer " + token)])
            #expect(response.status == 200, "\(String(decoding: response.body, as: UTF8.self))")
            #expect(response.json["iss"] as? String == provider.issuer)
            #expect(response.json["scope"] as? String == "openid read")
            let other = try await provider.issueJWTAccessToken(audience: "https://other.example.com")
            #expect(try await server.send(headers: [("Authorization", "Bearer " + other)]).status == 401)
            #expect(await server.stop().status == 0)
        }
    }

    /// Whether this machine can bind ::1 (some containers have no IPv6).
    static var hasIPv6Loopback: Bool {
        let fd = socket(AF_INET6, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_in6()
        address.sin6_family = sa_family_t(AF_INET6)
        address.sin6_addr = in6addr_loopback
        return withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in6>.size)) } } == 0
    }
}
