import Foundation
import OIDC
import OIDCTesting
import OIDCTestSupport
import Testing

/// `oidc resource-server` against security review 5's I-CLOCK and R-L2, the real binary on loopback.
@Suite("oidc resource-server: replay on a shifted clock, cnf it cannot check (security review 5, I1, L2)", .timeLimit(.scaledMinutes(2)))
struct ResourceServerReview5Tests {
    @Test("I1: with OIDC_TEST_CLOCK_OFFSET -600 or 0, the same proof sent 3 times gets 200, 401, 401", arguments: [-600, 0])
    func shiftedClockReplay(_ offset: Int) async throws {
        let tokens = try AccessTokenIssuer()
        let server = try await ResourceServerProcess.start(tokens.arguments, environment: ["OIDC_TEST_CLOCK_OFFSET": String(offset)])
        defer { server.process.signal(SIGKILL) }
        let now = Date().addingTimeInterval(TimeInterval(offset))
        let key = try DPoPKey.generate()
        let token = try tokens.token(["cnf": ["jkt": key.thumbprint]], now: now)
        let proof = try key.proof(method: "GET", url: server.url("/me"), accessToken: Secret(token), now: now)
        var statuses: [Int] = []
        for _ in 0..<3 { statuses.append(try await server.send(headers: [("Authorization", "DPoP " + token), ("DPoP", proof)]).status) }
        #expect(statuses == [200, 401, 401])
        let stopped = await server.stop()
        #expect(stopped.stderr.contains("(replayed_dpop_proof)"), "\(stopped.stderr)")
    }

    @Test("L2: a token bound by cnf.jwk, cnf.kid, cnf.jku or cnf.x5t sent as Bearer gets 401 invalid_token under --dpop off and allowed; cnf.jkt too (as before)", arguments: ["off", "allowed"])
    func unsupportedConfirmation(_ mode: String) async throws {
        let tokens = try AccessTokenIssuer()
        let server = try await ResourceServerProcess.start(tokens.arguments + ["--dpop", mode])
        defer { server.process.signal(SIGKILL) }
        let confirmations: [[String: Any]] = [
            ["jwk": ["kty": "EC", "crv": "P-256", "x": "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU", "y": "x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0"]],
            ["kid": "pop-key-1"], ["jku": "https://keys.example/pop"], ["x5t": "dGhpcyBpcyBhIFNIQTEgdGh1bWJwcmludA"],
        ]
        for confirmation in confirmations {
            let response = try await server.send(headers: [("Authorization", "Bearer " + (try tokens.token(["cnf": confirmation])))])
            #expect(response.status == 401, "\(confirmation.keys)")
            #expect(response.headers.values("WWW-Authenticate").first?.contains(#"error="invalid_token""#) == true)
        }
        let plain = try await server.send(headers: [("Authorization", "Bearer " + (try tokens.token()))])
        #expect(plain.status == 200)
        let stopped = await server.stop()
        #expect(stopped.stderr.components(separatedBy: "(unsupported_cnf)").count - 1 == 4, "\(stopped.stderr)")
    }
}
