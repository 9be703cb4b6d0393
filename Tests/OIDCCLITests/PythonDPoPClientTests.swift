import Foundation
import OIDC
import OIDCTesting
import OIDCTestSupport
import Testing

/// An independent DPoP client, requests-oauth2client 1.8.0 from PyPI (its proofs made by jwskate),
/// drives `oidc resource-server --dpop required --nonce` through its nonce challenge
/// (scripts/dpop-client.py). It runs when the virtualenv of `scripts/dpop-client.sh install` is
/// there: `$OIDC_DPOP_CLIENT_PYTHON`, or `.build-dpop-client/venv/bin/python` in the checkout.
@Suite("oidc resource-server and a Python DPoP client", .timeLimit(.scaledMinutes(2)), .enabled(if: DPoPClientPeer.python != nil, "run scripts/dpop-client.sh install"))
struct PythonDPoPClientTests {
    static let root = DPoPClientPeer.root
    static var python: String? { DPoPClientPeer.python }

    @Test("TestProvider's DPoP-bound token: the client takes the use_dpop_nonce challenge, retries with the nonce, and keeps it for the next request")
    func nonceChallenge() async throws {
        let python = try #require(Self.python)
        try await withTestProvider { provider in
            let audience = "https://api.example.com"
            let server = try await ResourceServerProcess.start(["--issuer", provider.issuer, "--audience", audience, "--dpop", "required", "--nonce"])
            defer { server.process.signal(SIGKILL) }
            // The client's key: P-256, in a private PEM file; the token is bound to its thumbprint.
            let key = try TestSigningKey.generate(.es256)
            let keyFile = try ProviderAndMintCommandTests.temporaryFile(try key.pem())
            defer { try? FileManager.default.removeItem(atPath: keyFile) }
            let thumbprint = try DPoPKey(pem: try key.pem()).thumbprint
            let token = try await provider.issueJWTAccessToken(audience: audience, scope: "openid read", dpopKeyThumbprint: thumbprint)

            let client = try await OIDCBinary.run(
                [Self.root.appendingPathComponent("scripts/dpop-client.py").path, server.base + "/orders", "--key-file", keyFile],
                stdin: token, timeout: .scaled(.seconds(60)), executable: URL(fileURLWithPath: python)
            )
            #expect(client.status == 0, "\(client.stderr)")
            let answer = try #require(try JSONSerialization.jsonObject(with: Data(client.stdout.utf8)) as? [String: Any], "\(client.stdout)")
            // The same thumbprint, computed by jwskate: the token's cnf.jkt names the client's key.
            #expect(answer["jkt"] as? String == thumbprint)
            #expect(answer["nonce_challenges"] as? Int == 1)
            #expect(answer["nonce"] as? Bool == true)
            let requests = try #require(answer["requests"] as? [[String: Any]])
            #expect(requests.count == 2)
            for request in requests {
                #expect(request["status"] as? Int == 200, "\(request)")
                let body = try #require(request["body"] as? [String: Any])
                #expect(body["token_type"] as? String == "DPoP")
                #expect(body["cnf"] as? [String: String] == ["jkt": thumbprint])
                #expect(body["iss"] as? String == provider.issuer)
            }

            let stopped = await server.stop()
            #expect(stopped.status == 0)
            let lines = stopped.stderr.split(separator: "\n")
            // One challenge (the first proof had no nonce), then both requests accepted: the second
            // request's first proof already carried the nonce.
            #expect(lines.filter { $0.contains("refused GET /orders: 401 use_dpop_nonce (use_dpop_nonce)") }.count == 1, "\(stopped.stderr)")
            #expect(lines.filter { $0.contains("accepted GET /orders: DPoP token") }.count == 2, "\(stopped.stderr)")
            #expect(!stopped.stderr.contains(token))
        }
    }
}

/// Where scripts/dpop-client.sh installed the client.
enum DPoPClientPeer {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The virtualenv's Python, if installed.
    static var python: String? {
        if let named = ProcessInfo.processInfo.environment["OIDC_DPOP_CLIENT_PYTHON"], !named.isEmpty { return named }
        let installed = root.appendingPathComponent(".build-dpop-client/venv/bin/python").path
        return FileManager.default.isExecutableFile(atPath: installed) ? installed : nil
    }
}
