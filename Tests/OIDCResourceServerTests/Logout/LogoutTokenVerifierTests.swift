import Foundation
import OIDC
import OIDCResourceServer
import OIDCTesting
import Testing

@Suite("Logout token verifier (OIDC Back-Channel Logout 1.0 §2.6)")
struct LogoutTokenVerifierTests {
    typealias Contents = TestProvider.LogoutTokenContents

    @Test("a TestProvider logout token over loopback verifies: sub, sid, jti, no exp; its replay is refused")
    func validAndReplayed() async throws {
        try await LogoutFixture.run { fixture throws in
            let token = try await fixture.provider.logoutToken(Contents(subject: "user-1", sessionID: "session-1", tokenID: "jti-1"))
            let verified = try await fixture.verifier.verify(token, keys: fixture.keys)
            #expect(verified.issuer == fixture.provider.issuer)
            #expect(verified.subject == "user-1" && verified.sessionID == "session-1" && verified.tokenID == "jti-1")
            #expect(verified.expiresAt == nil)
            #expect(verified.audience == [TestProvider.Client.default.id])
            let selector = verified.selector(clientID: "app")
            #expect(selector.issuer == fixture.provider.issuer && selector.subject == "user-1" && selector.sessionID == "session-1")
            #expect(await fixture.refusal(token)?.rule == .replayed)
            // Another token with the same jti from the same issuer is a replay too.
            let again = try await fixture.provider.logoutToken(Contents(subject: "user-2", tokenID: "jti-1"))
            #expect(await fixture.refusal(again)?.rule == .replayed)
        }
    }

    @Test("sub alone, sid alone, no typ, application/logout+jwt, and a future exp all pass")
    func variantsPass() async throws {
        try await LogoutFixture.run { fixture throws in
            let now = Date()
            for contents in [
                Contents(subject: "u", sessionID: nil), Contents(subject: nil, sessionID: "s"), Contents(type: nil),
                Contents(type: "application/LOGOUT+JWT"), Contents(expiresAt: now.addingTimeInterval(120)),
                Contents(audience: ["other", TestProvider.Client.default.id]),
            ] {
                let token = try await fixture.provider.logoutToken(contents)
                let refusal = await fixture.refusal(token, now: now)
                #expect(refusal == nil, "\(String(describing: refusal))")
            }
        }
    }

    @Test("each rule of §2.4 and §2.6 refuses, naming itself", arguments: [
        ("no sub and no sid", Contents(subject: nil, sessionID: nil), LogoutTokenError.Rule.subjectOrSession),
        ("an empty sid", Contents(sessionID: ""), .subjectOrSession),
        ("a nonce", Contents(extraClaims: ["nonce": .string("n")]), .nonce),
        ("no jti", Contents(tokenID: nil), .jti),
        ("no events", Contents(extraClaims: ["events": .null]), .events),
        ("events not an object", Contents(extraClaims: ["events": .string("http://schemas.openid.net/event/backchannel-logout")]), .events),
        ("another event", Contents(extraClaims: ["events": .object(["http://schemas.openid.net/event/other": .object([:])])]), .events),
        ("the event's value not an object", Contents(extraClaims: ["events": .object(["http://schemas.openid.net/event/backchannel-logout": .string("x")])]), .events),
        ("another audience", Contents(audience: ["someone-else"]), .audience),
        ("typ JWT", Contents(type: "JWT"), .type),
        ("typ at+jwt", Contents(type: "at+jwt"), .type),
        ("an expired exp", Contents(expiresAt: Date().addingTimeInterval(-120)), .expired),
        ("an iat in the future", Contents(issuedAt: Date().addingTimeInterval(600)), .issuedAt),
        ("an iat too old", Contents(issuedAt: Date().addingTimeInterval(-3600)), .issuedAt),
        ("another iss", Contents(extraClaims: ["iss": .string("https://evil.example")]), .issuer),
        ("no iat", Contents(extraClaims: ["iat": .string("yesterday")]), .issuedAt),
    ])
    func refusals(_ what: String, _ contents: Contents, _ rule: LogoutTokenError.Rule) async throws {
        try await LogoutFixture.run { fixture throws in
            let token = try await fixture.provider.logoutToken(contents)
            let refusal = await fixture.refusal(token)
            #expect(refusal?.rule == rule, "\(what): \(String(describing: refusal))")
            #expect(!(refusal?.description.contains(token) ?? false))
            // A refused token does not use up its jti: the store holds nothing.
            #expect(fixture.replays.count == 0)
        }
    }

    @Test("typ JWT passes only with acceptsGenericType; an ID token never passes as a logout token")
    func genericTypeAndIDToken() async throws {
        try await LogoutFixture.run { fixture throws in
            var lenient = fixture.verifier
            lenient.acceptsGenericType = true
            #expect(await fixture.refusal(try await fixture.provider.logoutToken(Contents(type: "JWT")), verifier: lenient) == nil)
            // The provider's own ID token (typ JWT, nonce, no events) is refused even so.
            let tokens = try await fixture.provider.issueTokens()
            let idToken = try #require(tokens.idToken?.revealedValue)
            let refusal = await fixture.refusal(idToken, verifier: lenient)
            #expect(refusal?.rule == .events || refusal?.rule == .nonce, "\(String(describing: refusal))")
        }
    }

    @Test("a forged signature, an unknown key, HS256 and alg none are refused")
    func signatures() async throws {
        try await LogoutFixture.run { fixture throws in
            let token = try await fixture.provider.logoutToken()
            let parts = token.split(separator: ".").map(String.init)
            let other = try TestSigningKey.generate(.rs256, keyID: "rsa-1-00000000")
            let resigned = try other.sign(
                headerJSON: String(decoding: Base64URLEncoding.decode(parts[0]) ?? [], as: UTF8.self),
                payloadJSON: String(decoding: Base64URLEncoding.decode(parts[1]) ?? [], as: UTF8.self))
            #expect(await fixture.refusal(parts[0] + "." + parts[1] + "." + resigned.split(separator: ".")[2])?.rule == .signature)
            let unknown = try TestSigningKey.generate(.es256, keyID: "no-such-key")
            let stranger = try unknown.sign(
                headerJSON: #"{"alg":"ES256","kid":"no-such-key","typ":"logout+jwt"}"#,
                payloadJSON: String(decoding: Base64URLEncoding.decode(parts[1]) ?? [], as: UTF8.self))
            #expect(await fixture.refusal(stranger)?.rule == .key)
            let none = Base64URLEncoding.encode(Array(#"{"alg":"none"}"#.utf8)) + "." + parts[1] + "."
            #expect(await fixture.refusal(none)?.rule == .algorithm)
            let symmetric = try TokenMinter(algorithm: .hs256, key: "a-shared-secret-of-32-bytes-long")
                .mint(claimsJSON: String(decoding: Base64URLEncoding.decode(parts[1]) ?? [], as: UTF8.self))
            #expect(await fixture.refusal(symmetric)?.rule == .algorithm)
            #expect(fixture.replays.count == 0)
        }
    }

    @Test("bad input is refused without a crash: huge, nested, duplicate members, crit, JWE, garbage")
    func badInput() async throws {
        try await LogoutFixture.run { fixture throws in
            let key = try TestSigningKey.generate(.es256)
            let header = #"{"alg":"ES256","typ":"logout+jwt"}"#
            let nested = String(repeating: "[", count: 5000) + String(repeating: "]", count: 5000)
            let cases: [(String, LogoutTokenError.Rule)] = [
                (String(repeating: "a", count: 70_000), .malformed),
                ("a.b.c.d.e", .malformed),
                ("", .malformed),
                ("ünïcode.ünïcode.ünïcode", .malformed),
                (try key.sign(headerJSON: header, payloadJSON: #"{"iss":"x","iss":"y"}"#), .signature),
                (try key.sign(headerJSON: #"{"alg":"ES256","crit":["exp"]}"#, payloadJSON: "{}"), .malformed),
                (try key.sign(headerJSON: header, payloadJSON: #"{"a":"# + nested + "}"), .signature),
            ]
            for (token, rule) in cases {
                let refusal = await fixture.refusal(token)
                #expect(refusal?.rule == rule, "\(token.prefix(40)): \(String(describing: refusal))")
            }
        }
    }

    @Test("duplicate claims and deep nesting in a correctly signed token are refused as malformed")
    func strictClaims() async throws {
        try await LogoutFixture.run { fixture throws in
            let base = try await fixture.provider.logoutToken()
            let parts = base.split(separator: ".").map(String.init)
            let claims = String(decoding: Base64URLEncoding.decode(parts[1]) ?? [], as: UTF8.self)
            let duplicated = String(claims.dropLast()) + #","jti":"second"}"#
            let nested = String(claims.dropLast()) + #","x":"# + String(repeating: "[", count: 100) + String(repeating: "]", count: 100) + "}"
            for payload in [duplicated, nested] {
                let token = try await fixture.provider.signLikeIDTokens(headerJSON: String(decoding: Base64URLEncoding.decode(parts[0]) ?? [], as: UTF8.self), payloadJSON: payload)
                #expect(await fixture.refusal(token)?.rule == .malformed)
            }
        }
    }

    @Test("a store that cannot answer refuses the token as unavailable")
    func storeUnavailable() async throws {
        struct Broken: ReplayStore {
            func claim(_ identifier: String, until expiry: Date) async throws -> Bool { throw ReplayStoreError(.unavailable("down")) }
        }
        try await LogoutFixture.run { fixture throws in
            var verifier = fixture.verifier
            verifier.replayStore = Broken()
            let refusal = await fixture.refusal(try await fixture.provider.logoutToken(), verifier: verifier)
            #expect(refusal?.rule == .unavailable)
        }
    }
}
