import Foundation
import OIDC
import OIDCTesting
import OIDCTestSupport
import Testing

/// `oidc verify --kind access`: an RFC 9068 access token checked by OIDCResourceServer's rules from
/// the command line; `--kind id` (the default) is the ID-token verification of before.
@Suite("oidc verify --kind", .timeLimit(.scaledMinutes(1)))
struct VerifyKindTests {
    static func verify(_ token: String, _ tokens: AccessTokenIssuer, _ extra: [String] = []) async throws -> CommandResult {
        try await OIDCBinary.run(["verify", "-", "--kind", "access"] + tokens.arguments + extra, stdin: token)
    }

    @Test("an access token verifies: exit 0, its claims as JSON on stdout")
    func accepted() async throws {
        let tokens = try AccessTokenIssuer()
        let result = try await Self.verify(try tokens.token(), tokens, ["--require-scope", "read"])
        #expect(result.status == 0, "\(result.stderr)")
        let claims = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        #expect(claims["sub"] as? String == "alice")
        #expect(claims["client_id"] as? String == "my-cli")
        #expect(claims["aud"] as? String == AccessTokenIssuer.audience)
    }

    @Test("refused with the rule's name, exit 4, never the token", arguments: [
        ("expired", "token_expired"), ("audience", "audience_mismatch"), ("scope", "insufficient_scope"),
        ("id-token", "untyped_token"), ("logout-token", "wrong_token_type"), ("issuer", "untrusted_issuer"),
    ])
    func refused(kind: String, rule: String) async throws {
        let tokens = try AccessTokenIssuer()
        let now = Int(Date().timeIntervalSince1970)
        let token: String = switch kind {
        case "expired": try tokens.token(["exp": now - 3600])
        case "audience": try tokens.token(["aud": "https://other.example.com"])
        case "scope": try tokens.token(["scope": "write"])
        case "id-token": try tokens.token(["aud": AccessTokenIssuer.audience, "nonce": "n", "azp": "my-cli"], header: ["typ": "JWT"])
        case "logout-token": try tokens.token(["events": ["http://schemas.openid.net/event/backchannel-logout": [:]]], header: ["typ": "logout+jwt"])
        default: try tokens.token(["iss": "https://evil.example.com"])
        }
        let result = try await Self.verify(token, tokens, ["--require-scope", "read"])
        #expect(result.status == 4, "\(result.stderr)")
        #expect(result.stderr.contains("the access token is refused (\(rule))"), "\(result.stderr)")
        #expect(result.stdout.isEmpty)
        #expect(!result.stderr.contains(token))
    }

    @Test("--now verifies as of another time: a token expired now verifies as of an hour ago")
    func asOf() async throws {
        let tokens = try AccessTokenIssuer()
        let hourAgo = Date().addingTimeInterval(-3600)
        let token = try tokens.token(now: hourAgo)
        #expect(try await Self.verify(token, tokens, ["--leeway", "0"]).status == 4)
        let then = try await Self.verify(token, tokens, ["--now", String(Int(hourAgo.timeIntervalSince1970) + 10)])
        #expect(then.status == 0, "\(then.stderr)")
    }

    @Test("a DPoP-bound token is refused: its proof cannot be checked here")
    func bound() async throws {
        let tokens = try AccessTokenIssuer()
        let result = try await Self.verify(try tokens.token(boundTo: try DPoPKey.generate()), tokens)
        #expect(result.status == 4)
        #expect(result.stderr.contains("DPoP-bound"), "\(result.stderr)")
    }

    @Test("ID-token flags with --kind access, and --require-scope without it, are usage errors", arguments: [
        (["--kind", "access", "--nonce", "n"], "--nonce"), (["--kind", "access", "--max-age", "5"], "--max-age"),
        (["--require-scope", "read"], "--require-scope"), (["--kind", "refresh"], "--kind"),
    ])
    func usage(arguments: [String], flag: String) async throws {
        let tokens = try AccessTokenIssuer()
        let result = try await OIDCBinary.run(["verify", "-"] + tokens.arguments + arguments, stdin: try tokens.token())
        #expect(result.status == 2, "\(result.stderr)")
        #expect(result.stderr.contains(flag), "\(result.stderr)")
    }

    @Test("--kind logout: TestProvider's logout token verifies (its claims on stdout); with a nonce, another audience, or typed as an ID token, refused naming the rule; typed JWT with --accept-generic-type; never taken as an ID token")
    func logout() async throws {
        try await withTestProvider { provider in
            func verify(_ token: String, audience: String = TestProvider.Client.default.id) async throws -> CommandResult {
                try await OIDCBinary.run(
                    ["verify", "-", "--kind", "logout", "--issuer", provider.issuer, "--audience", audience, "--jwks", provider.jwksURI], stdin: token)
            }
            let good = try await provider.logoutToken(.init(sessionID: "s-1"))
            let accepted = try await verify(good)
            #expect(accepted.status == 0, "\(accepted.stderr)")
            let claims = try #require(try JSONSerialization.jsonObject(with: Data(accepted.stdout.utf8)) as? [String: Any])
            #expect(claims["sid"] as? String == "s-1")
            #expect(claims["sub"] as? String == TestUser.default.subject)

            let refusals: [(String, String)] = [
                (try await provider.logoutToken(.init(extraClaims: ["nonce": "n"])), "nonce"),
                (try await provider.logoutToken(.init(audience: ["another-client"])), "audience"),
                (try await provider.logoutToken(.init(type: "JWT")), "type"),
                (try await provider.logoutToken(.init(subject: nil, sessionID: nil)), "sub_or_sid"),
            ]
            for (token, rule) in refusals {
                let refused = try await verify(token)
                #expect(refused.status == 4, "\(rule): \(refused.stderr)")
                #expect(refused.stderr.contains("the logout token is refused (\(rule))"), "\(refused.stderr)")
                #expect(!refused.stderr.contains(token))
            }
            // Typed JWT, as glewlwyd and Keycloak send them: taken with --accept-generic-type, which is for logout tokens only.
            let generic = try await provider.logoutToken(.init(type: "JWT"))
            let takenGeneric = try await OIDCBinary.run(
                ["verify", "-", "--kind", "logout", "--accept-generic-type", "--issuer", provider.issuer, "--audience", TestProvider.Client.default.id,
                 "--jwks", provider.jwksURI], stdin: generic)
            #expect(takenGeneric.status == 0, "\(takenGeneric.stderr)")
            let misplaced = try await OIDCBinary.run(
                ["verify", "-", "--accept-generic-type", "--issuer", provider.issuer, "--audience", TestProvider.Client.default.id, "--jwks", provider.jwksURI],
                stdin: generic)
            #expect(misplaced.status == 2 && misplaced.stderr.contains("--accept-generic-type is for logout tokens"), "\(misplaced.stderr)")
            // An ID token is no logout token, nor the other way round: typed logout+jwt or JWT, or untyped (its events claim).
            let untyped = try await provider.logoutToken(.init(expiresAt: Date().addingTimeInterval(300), type: nil))
            for token in [good, generic, untyped] {
                let asID = try await OIDCBinary.run(
                    ["verify", "-", "--issuer", provider.issuer, "--audience", TestProvider.Client.default.id, "--jwks", provider.jwksURI], stdin: token)
                #expect(asID.status == 4, "\(asID.stderr)")
            }
        }
    }
}
