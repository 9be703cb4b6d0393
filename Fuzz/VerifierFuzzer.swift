// libFuzzer entry point over the library's untrusted inputs: tokens, JWKS, JSON, callbacks, the
// device authorization, introspection and pushed authorization request answers of a provider, and private keys read from files.
// Built by scripts/fuzz.sh together with the OIDC sources (SwiftPM has no fuzzer products). The first
// input byte picks the target.
import Foundation

private let fixedKeys: JWKSet? = try? JWKSet(json: #"""
{"keys":[{"kty":"EC","crv":"P-256","kid":"e","x":"f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU","y":"x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0"},
{"kty":"OKP","crv":"Ed25519","kid":"o","x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"}]}
"""#)

private let callbackRequest: AuthorizationRequest? = {
    guard var request = try? AuthorizationRequest(
        authorizationEndpoint: URL(string: "https://idp.example/authorize")!, clientID: "c",
        redirectURI: "com.example.app:/callback", scopes: ["openid"], issuer: "https://idp.example"
    ) else { return nil }
    request.state = "s"
    return request
}()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size > 0 else { return 0 }
    let selector = data[0]
    let body = UnsafeBufferPointer(start: data + 1, count: size - 1)
    switch selector % 6 {
    case 0:  // a token against fixed keys
        let token = String(decoding: body, as: UTF8.self)
        let verifier = IDTokenVerifier(issuer: "https://idp.example", clientID: "c", nonce: .notChecked)
        if let keys = fixedKeys { _ = try? verifier.verify(token, keys: keys, now: Date(timeIntervalSince1970: 1_800_000_000)) }
        _ = try? UnverifiedJWT(token)
    case 1:  // a JWKS document
        if let set = try? JWKSet(json: Array(body)) {
            for key in set.keys { for algorithm in [JWSAlgorithm.es256, .edDSA, .ed25519, .rs256] { _ = key.mayVerify(algorithm) } }
        }
    case 2:  // strict JSON and base64url
        _ = try? StrictJSON.parseObject(Array(body), maximumDepth: 16)
        _ = Base64URL.decode(body)
    case 4:  // a provider's device authorization (RFC 8628), introspection (RFC 7662) and pushed request (RFC 9126) answers
        _ = try? DeviceAuthorization(answer: Array(body), receivedAt: Date(timeIntervalSince1970: 1_800_000_000))
        _ = try? TokenIntrospection(answer: Array(body))
        _ = try? PushedAuthorization(json: Array(body), now: Date(timeIntervalSince1970: 1_800_000_000))
    case 5:  // a client's private key: a JWK or PEM, as read from --private-key-file
        let text = String(decoding: body, as: UTF8.self)
        if text.first == "{" { _ = try? JWSSigningKey(jwk: text) } else { _ = try? JWSSigningKey(pem: text) }
    default:  // an authorization callback URL
        if let url = URL(string: String(decoding: body, as: UTF8.self)), let request = callbackRequest {
            _ = try? AuthorizationResponse(callbackURL: url, request: request)
            _ = try? request.handleRedirect(url)
        }
    }
    return 0
}
