internal import Foundation
internal import Logging

extension AuthenticatedSession {
    /// Proofs for `login`'s tokens: `nil` for bearer tokens, the login's own key for DPoP-bound ones.
    ///
    /// - Throws: ``OIDCError/Code/notLoggedIn`` when the tokens are DPoP-bound and their key is
    ///   missing or is another key than the one they are bound to: nobody can prove them, so the
    ///   user must log in again (the login is kept, untouched).
    func proofs(for login: StoredLogin) throws(OIDCError) -> DPoP? {
        let bound = login.dpopThumbprint != nil || login.tokens.tokenType.caseInsensitiveCompare("DPoP") == .orderedSame
        guard bound else { return nil }
        guard let key = login.dpopKey, let thumbprint = login.dpopThumbprint, ConstantTime.equals(key.thumbprint, thumbprint) else {
            let what = login.dpopKey == nil ? "is missing from the stored login" : "is not the key they are bound to"
            throw OIDCError(
                .notLoggedIn,
                "The tokens under \(self.key) are DPoP-bound, and their DPoP key \(what): they cannot be used. Log in again.",
                context: ["dpop": login.dpopKey == nil ? "key-missing" : "key-mismatch"]
            )
        }
        return DPoP(key: key, nonces: dpopNonces, now: now)
    }

    /// Sends `request` with `login`'s access token: `Authorization: Bearer`, or `Authorization: DPoP`
    /// with a fresh proof; a resource's `use_dpop_nonce` challenge gets one retry with its nonce,
    /// and never a refresh (RFC 9449 §9).
    func sendAuthorized(_ request: HTTPRequest, with login: StoredLogin, attempt: Int) async throws(OIDCError) -> HTTPResponse {
        let token = login.tokens.accessToken
        var authorized = request
        guard let dpop = try proofs(for: login) else {
            authorized.headers.set("Authorization", "Bearer " + token.revealedValue)
            let response = try await transport.send(authorized, options: options.requestOptions)
            logger.trace("resource answered", metadata: lineMetadata(["url": .endpoint(request.url), "status": .int(response.status), "attempt": .int(attempt)]))
            return response
        }
        authorized.headers.set("Authorization", "DPoP " + token.revealedValue)
        let response = try await transport.send(try dpop.signing(authorized, accessToken: token), options: options.requestOptions)
        logger.trace(
            "resource answered", metadata: lineMetadata(["url": .endpoint(request.url), "status": .int(response.status), "attempt": .int(attempt), "dpop": .bool(true)]))
        guard dpop.nonceChallenged(response, to: request.url) else { return response }
        logger.debug("resource asked for a DPoP nonce; retrying once with it", metadata: lineMetadata(["url": .endpoint(request.url)]))
        let retried = try await transport.send(try dpop.signing(authorized, accessToken: token), options: options.requestOptions)
        guard dpop.nonceChallenged(retried, to: request.url) else { return retried }
        // A second challenge is the resource's problem, not the token's: no refresh.
        throw OIDCError(
            .unauthorized,
            "The resource at \(HTTPErrorMapping.describe(request.url)) asked for a new DPoP nonce twice in a row; it rotates nonces faster than a request can use one. Try again later.",
            context: ["status": String(retried.status), "dpop": "use_dpop_nonce"]
        )
    }
}
