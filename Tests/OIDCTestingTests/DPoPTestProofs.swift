import Foundation
import OIDC
import OIDCTesting
import OIDCTestSupport
import Testing

/// A DPoP key and the proofs a client makes with it (RFC 9449 §4.2), written out here from the
/// library's signing key so the provider's checks are tested against proofs the test controls.
struct DPoPTestKey {
    let key: JWSSigningKey

    init(_ algorithm: JWSAlgorithm = .es256) throws {
        key = try JWSSigningKey.generate(algorithm)
    }

    /// The public JWK without `kid`, `alg` and `use`, as a proof's header carries it.
    var jwk: [String: JSONValue] { key.publicJWK.filter { !["kid", "alg", "use"].contains($0.key) } }

    var thumbprint: String { get throws { try key.thumbprint() } }

    /// A proof for `method` `url`; `claims` adds or replaces claims (`.null` removes one), `header`
    /// adds or replaces header members.
    func proof(
        _ method: String, _ url: String, accessToken: String? = nil, nonce: String? = nil, issuedAt: Date = Date(),
        claims extra: [String: JSONValue] = [:], header: [String: JSONValue] = [:], type: String = "dpop+jwt"
    ) throws -> String {
        var claims: [String: JSONValue] = [
            "jti": .string(try RandomToken.generate()), "htm": .string(method), "htu": .string(url),
            "iat": .number(Double(Int(issuedAt.timeIntervalSince1970))),
        ]
        if let accessToken { claims["ath"] = .string(Self.hash(accessToken)) }
        if let nonce { claims["nonce"] = .string(nonce) }
        for (name, value) in extra { claims[name] = value == .null ? nil : value }
        return try key.sign(claims: claims, type: type, extraHeader: ["jwk": .object(jwk)].merging(header) { $1 })
    }

    /// `ath`: base64url of the SHA-256 of the token.
    static func hash(_ token: String) -> String {
        var digest = [UInt8](repeating: 0, count: 32)
        if let bytes = try? LibCrypto.sha256(Array(token.utf8)) { digest = bytes }
        return Base64URL.encode(digest)
    }
}

/// Requests a DPoP client sends, over loopback.
enum DPoPRequests {
    static let redirectURI = "http://127.0.0.1:53682/callback"

    static func header(_ proof: String) -> RawHTTPClient.Header { .init(name: "DPoP", value: proof) }

    /// `/authorize` for the default client, with `extra` parameters (`dpop_jkt`); the code.
    static func authorize(_ provider: TestProvider, pkce: PKCE, extra: KeyValuePairs<String, String> = [:]) async throws -> String {
        var parameters = [
            OAuthParameter("response_type", "code"), OAuthParameter("client_id", "test-client"), OAuthParameter("redirect_uri", redirectURI),
            OAuthParameter("scope", "openid offline_access"), OAuthParameter("code_challenge", pkce.challenge),
            OAuthParameter("code_challenge_method", "S256"),
        ]
        parameters += extra.map { OAuthParameter($0.key, $0.value) }
        let response = try await RawHTTPClient.get(provider.authorizationEndpoint + "?" + FormEncoding.encode(parameters))
        #expect(response.status == 302)
        return try #require(try response.redirectParameters()["code"])
    }

    static func exchange(_ provider: TestProvider, code: String, pkce: PKCE, proof: String?) async throws -> RawHTTPClient.Response {
        try await RawHTTPClient.postForm(provider.tokenEndpoint, [
            "grant_type": "authorization_code", "code": code, "redirect_uri": redirectURI, "client_id": "test-client",
            "code_verifier": pkce.verifier.revealedValue,
        ], headers: proof.map { [header($0)] } ?? [])
    }

    static func refresh(_ provider: TestProvider, _ refreshToken: String, proof: String?) async throws -> RawHTTPClient.Response {
        try await RawHTTPClient.postForm(provider.tokenEndpoint, [
            "grant_type": "refresh_token", "refresh_token": refreshToken, "client_id": "test-client",
        ], headers: proof.map { [header($0)] } ?? [])
    }

    /// A code flow with a proof by `key` at the token endpoint; the token response.
    static func signIn(_ provider: TestProvider, key: DPoPTestKey) async throws -> [String: Any] {
        let pkce = try PKCE.generate()
        let code = try await authorize(provider, pkce: pkce)
        let response = try await exchange(provider, code: code, pkce: pkce, proof: try key.proof("POST", provider.tokenEndpoint))
        #expect(response.status == 200)
        return try response.json()
    }

    /// `GET` `url` with `Authorization: DPoP token` and the proof, when given.
    static func get(_ url: String, token: String, scheme: String = "DPoP", proof: String?) async throws -> RawHTTPClient.Response {
        var headers = [RawHTTPClient.Header(name: "Authorization", value: "\(scheme) \(token)")]
        if let proof { headers.append(header(proof)) }
        return try await RawHTTPClient.get(url, headers: headers)
    }

    /// What introspection says of `token`, asked by the default client.
    static func introspect(_ provider: TestProvider, _ token: String) async throws -> [String: Any] {
        let response = try await RawHTTPClient.postForm(provider.introspectionEndpoint, ["token": token, "client_id": "test-client"])
        #expect(response.status == 200)
        return try response.json()
    }

    /// The `error` of a JSON error body.
    static func error(_ response: RawHTTPClient.Response) -> String? {
        (try? response.json())?["error"] as? String
    }
}
