public import Hummingbird
internal import Foundation
internal import HTTPTypes
internal import Logging
internal import NIOCore
internal import OIDC
internal import OIDCResourceServer

extension WebSignIn {
    /// Adds the login, callback, logout and (with ``backChannelLogout``) back-channel logout routes.
    public func addRoutes<Context: RequestContext>(to router: some RouterMethods<Context>) {
        router.get(RouterPath(loginPath)) { request, context in try await self.startLogin(request, logger: context.logger) }
        router.get(RouterPath(redirectURI.path())) { request, context in await self.finishLogin(request, logger: context.logger) }
        router.post(RouterPath(logoutPath)) { request, context in await self.logout(request, logger: context.logger) }
        if backChannelLogout != nil {
            router.post(RouterPath(backChannelLogoutPath)) { request, context in await self.backChannelLogout(request, logger: context.logger) }
        }
    }

    /// `GET /auth/login?return=/path`: a new login bound to this browser, then the provider.
    func startLogin(_ request: Request, logger: Logger) async throws -> Response {
        let authorization = try relyingParty.authorizationRequest(redirectURI: redirectURI.absoluteString, scopes: scopes)
        let id = try await pending.begin(authorization)
        var response = Response.redirect(to: try await relyingParty.authorizationURL(for: authorization).absoluteString, type: .found)
        response.headers[.cacheControl] = "no-store"
        let lifetime = Int(pending.lifetime.components.seconds)
        response.setCookie(cookie(loginCookie, id, maxAge: lifetime))
        let back = Self.localPath(request.uri.queryParameters["return"].map(String.init)) ?? "/"
        response.setCookie(cookie(returnCookie, Self.cookieValue(returning: back), maxAge: lifetime))
        return response
    }

    /// The callback: only in the browser that started the login, with its state; then a new
    /// session (a new id: whatever session id the browser had is ended), and back to where the
    /// login began.
    func finishLogin(_ request: Request, logger: Logger) async -> Response {
        guard let callback = URL(string: redirectURI.absoluteString + "?" + (request.uri.query ?? "")) else {
            return Self.page(.badRequest, "The callback's query is not valid.")
        }
        // Only a callback with this browser's login's state ends it: a forged one leaves it pending.
        guard let id = request.cookies[loginCookie]?.value, let authorization = await pending.end(id, callback: callback) else {
            logger.info("web sign-in: a callback without this browser's login (forged, replayed or expired) was refused")
            return Self.page(.badRequest, "This sign-in was not started in this browser, or it has expired. Start again at \(loginPath).")
        }
        do {
            let login = try await relyingParty.completeLogin(callback: callback, for: authorization)
            let sessionID = try RandomToken.generate()
            let csrf = try RandomToken.generate()
            let began = String(Int(relyingParty.tokenClient.now().timeIntervalSince1970))
            try await relyingParty.save(
                login, in: sessions, as: try key(forSession: sessionID), attributes: [SignedIn.csrfAttribute: csrf, Self.signedInAtAttribute: began])
            if let previous = request.cookies[sessionCookie]?.value, let key = try? self.key(forSession: previous) {
                try? await sessions.withLock(key) { try await sessions.delete(key) }
            }
            let back = Self.returnPath(fromCookie: request.cookies[returnCookie]?.value) ?? "/"
            var response = Response.redirect(to: back, type: .found)
            response.headers[.cacheControl] = "no-store"
            response.setCookie(cookie(loginCookie, "", maxAge: 0))
            response.setCookie(cookie(returnCookie, "", maxAge: 0))
            response.setCookie(cookie(sessionCookie, sessionID, maxAge: Int(sessionLifetime.components.seconds)))
            logger.info("web sign-in: signed in subject \(UntrustedText.sanitized(login.idToken.claims.subject))")
            return response
        } catch {
            // The details (never a secret: OIDCError's texts carry none) are for the server's log.
            logger.info("web sign-in: the sign-in failed: \(error.description)")
            if error.code == .providerError, let provider = error.providerError {
                return Self.page(.forbidden, "The provider did not sign you in (\(UntrustedText.sanitized(provider.error, limit: 60))). Start again at \(loginPath).")
            }
            return Self.page(error.category == .storage ? .internalServerError : .badRequest, "The sign-in failed. Start again at \(loginPath).")
        }
    }

    /// `POST /auth/logout` with the session's CSRF token in the form field `csrf`: the session
    /// ends (its refresh token revoked), then the provider's end-session endpoint, or ``signedOutPath``.
    ///
    /// A request from another site (`Sec-Fetch-Site: cross-site`) is refused, and one without a
    /// session cookie (as another site's `POST` is: the cookie is `SameSite=Lax`) goes to
    /// ``signedOutPath``; neither touches a cookie, so a page elsewhere can neither end the session
    /// nor clear its cookie while its tokens live on.
    func logout(_ request: Request, logger: Logger) async -> Response {
        guard request.headers[Self.fetchSite] != "cross-site" else {
            logger.info("web sign-in: a logout from another site was refused")
            return Self.page(.forbidden, "This sign-out came from another site. Sign out with the app's button.")
        }
        guard let sessionID = request.cookies[sessionCookie]?.value else {
            var response = Response.redirect(to: signedOutPath, type: .normal)
            response.headers[.cacheControl] = "no-store"
            return response
        }
        guard let key = try? key(forSession: sessionID), let login = try? await sessions.load(key) else {
            // This browser's session has already ended: its cookie goes too.
            return Self.signedOut(to: signedOutPath, cookie: cookie(sessionCookie, "", maxAge: 0))
        }
        let form = await Self.form(request)
        guard let sent = form["csrf"], let expected = login.attributes[SignedIn.csrfAttribute], ConstantTime.equals(sent, expected) else {
            logger.info("web sign-in: a logout without the session's CSRF token was refused")
            return Self.page(.forbidden, "This sign-out did not come from this app's page. Sign out with the app's button.")
        }
        let idToken = login.tokens.idToken
        do { try await session(forKey: key).logout(revoke: true) } catch {
            // Revocation is best effort; the session is gone unless the store failed.
            logger.info("web sign-in: logout: \(error)")
            try? await sessions.withLock(key) { try await sessions.delete(key) }
        }
        var target = signedOutPath
        if let url = try? relyingParty.tokenClient.endSessionURL(idTokenHint: idToken, postLogoutRedirectURI: postLogoutRedirectURI?.absoluteString) {
            target = url.absoluteString
        }
        logger.info("web sign-in: signed out\(login.subject.map { " subject \(UntrustedText.sanitized($0))" } ?? "")")
        return Self.signedOut(to: target, cookie: cookie(sessionCookie, "", maxAge: 0))
    }

    /// The provider's `POST` of a logout token: every session it names (its user, or its provider
    /// session `sid`) is deleted from the store.
    func backChannelLogout(_ request: Request, logger: Logger) async -> Response {
        guard let endpoint = backChannelLogout else { return Self.page(.notFound, "No back-channel logout here.") }
        let body: ByteBuffer
        do { body = try await request.body.collect(upTo: endpoint.maximumBodyLength) } catch {
            return Self.page(.contentTooLarge, "The request's body is too large.")
        }
        let result = await endpoint.handle(contentType: request.headers[.contentType], body: Array(body.readableBytesView), deletingFrom: sessions)
        switch result.outcome {
        case .refused(let error): logger.info("web sign-in: back-channel logout refused: \(error.description)")
        case .logout: logger.info("web sign-in: back-channel logout ended \(result.deletedLogins ?? 0) session(s)")
        }
        var headers = HTTPFields()
        for (name, value) in result.response.headers {
            if let name = HTTPField.Name(name) { headers[name] = value }
        }
        return Response(
            status: HTTPResponse.Status(code: result.response.status), headers: headers,
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: result.response.body)))
    }

    /// `Sec-Fetch-Site` (Fetch Metadata): `cross-site` on another site's request.
    static let fetchSite = HTTPField.Name("Sec-Fetch-Site")!

    /// A form body's fields (`application/x-www-form-urlencoded`, 8 KiB at most); empty otherwise.
    static func form(_ request: Request) async -> [String: String] {
        guard request.headers[.contentType]?.lowercased().hasPrefix("application/x-www-form-urlencoded") == true,
            let body = try? await request.body.collect(upTo: 8192)
        else { return [:] }
        // Not Foundation's URLComponents: it stops the process on a malformed query (a lone `%`).
        // A field given twice is no answer either (RFC 6749 §3.1's rule, kept here).
        guard let parameters = try? FormURLEncoding.decode(String(buffer: body)) else { return [:] }
        return Dictionary(parameters.map { ($0.name, $0.value) }) { first, _ in first }
    }

    static func signedOut(to target: String, cookie: Cookie) -> Response {
        // 303: the browser follows a POST's answer with a GET.
        var response = Response.redirect(to: target, type: .normal)
        response.headers[.cacheControl] = "no-store"
        response.setCookie(cookie)
        return response
    }

    static func page(_ status: HTTPResponse.Status, _ message: String) -> Response {
        let html = "<!doctype html><meta charset=utf-8><title>Sign-in</title><p>\(Self.escaped(message))</p>\n"
        return Response(
            status: status, headers: [.contentType: "text/html; charset=utf-8", .cacheControl: "no-store"],
            body: ResponseBody(byteBuffer: ByteBuffer(string: html)))
    }

    /// `text` for an HTML text node or attribute value.
    public static func escaped(_ text: String) -> String { HTMLEscaping.escaped(text) }
}
