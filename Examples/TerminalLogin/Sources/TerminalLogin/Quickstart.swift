import Foundation
import OIDC

/// Logs the user in through the browser, keeps the login, and calls the API with it.
func signInAndCallAPI(issuer: String, clientID: String, api: URL) async throws -> HTTPResponse {
    let rp = try await RelyingParty.discover(issuer: issuer, clientID: clientID)
    let login = try await rp.loopbackLogin().runLogin { url in print("Sign in at \(url)") }
    let key = TokenStoreKey(service: "my-tool", account: clientID)
    let store = try FileKeychain()
    try await rp.save(login, in: store, as: key)
    let session = rp.session(store: store, key: key, allowlist: .default(for: api))
    return try await session.send(HTTPRequest(url: api))
}

/// Later, in another run of the tool: the kept login, refreshed when it needs to be.
func callAPIAgain(issuer: String, clientID: String, api: URL) async throws -> HTTPResponse {
    let rp = try await RelyingParty.discover(issuer: issuer, clientID: clientID)
    let session = rp.session(store: try FileKeychain(), key: TokenStoreKey(service: "my-tool", account: clientID), allowlist: .default(for: api))
    return try await session.send(HTTPRequest(url: api))
}
