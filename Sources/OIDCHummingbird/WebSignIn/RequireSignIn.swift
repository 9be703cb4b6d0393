public import Hummingbird
public import OIDC
internal import Foundation
internal import HTTPTypes
internal import Logging
internal import NIOCore

/// The signed-in user of a request that ``RequireSignIn`` let through: the login kept on the
/// server, its tokens in use, and the token a logout form must carry.
public struct SignedIn: Sendable {
    /// The login as the store keeps it (issuer, subject, provider session id, tokens, ID token claims).
    public let login: StoredLogin
    /// The session's tokens in use: `AuthenticatedSession.validTokens(forceRefresh:)`
    /// refreshes them when they expire; `send(_:)` calls an API with them.
    public let session: AuthenticatedSession
    /// The value a logout form sends in its `csrf` field: a random value of this session's, checked
    /// in constant time. Put it in the page's sign-out form, never in a URL.
    public let csrfToken: String

    /// The user's `sub` at the provider.
    public var subject: String? { login.subject }

    /// A sign-out button for ``WebSignIn/logoutPath``: a `POST` form with this session's CSRF token.
    public func logoutForm(action: String = "/auth/logout", label: String = "Sign out") -> String {
        #"<form method="post" action="\#(WebSignIn.escaped(action))"><input type="hidden" name="csrf" value="\#(WebSignIn.escaped(csrfToken))"><button type="submit">\#(WebSignIn.escaped(label))</button></form>"#
    }

    /// The attribute of the stored login that holds the CSRF token.
    static let csrfAttribute = "web.csrf"
}

/// A request context that carries the signed-in user ``RequireSignIn`` found. Conform your own
/// context to it, or use ``BasicSignInRequestContext``.
public protocol SignInRequestContext: RequestContext {
    /// The signed-in user; set by ``RequireSignIn``, `nil` on a route it does not protect.
    var signedIn: SignedIn? { get set }
}

extension SignInRequestContext {
    /// The signed-in user of a route behind ``RequireSignIn``.
    ///
    /// - Throws: `HTTPError(.internalServerError)` when no ``RequireSignIn`` protects this route.
    public func requireSignedIn() throws -> SignedIn {
        guard let signedIn else {
            throw HTTPError(.internalServerError, message: "This route reads the signed-in user, but no RequireSignIn middleware protects it.")
        }
        return signedIn
    }
}

/// Hummingbird's basic request context, plus the signed-in user.
public struct BasicSignInRequestContext: SignInRequestContext {
    /// Hummingbird's storage: logger, allocator, parameters.
    public var coreContext: CoreRequestContextStorage
    /// The signed-in user, set by ``RequireSignIn``.
    public var signedIn: SignedIn?

    /// A context for a request from `source`.
    public init(source: Source) {
        coreContext = .init(source: source)
    }
}

extension WebSignIn {
    /// The middleware that lets only a signed-in browser through.
    public func requireSignIn<Context: SignInRequestContext>() -> RequireSignIn<Context> {
        RequireSignIn(signIn: self)
    }
}

/// Lets a request through only from a browser with a live session: its tokens are loaded, and
/// refreshed first when they have expired (a refused refresh ends the session). Without one, a
/// `GET` is sent to ``WebSignIn/loginPath`` (to come back here after the sign-in), anything else
/// gets `401`.
public struct RequireSignIn<Context: SignInRequestContext>: RouterMiddleware {
    /// The sign-in whose sessions it reads.
    public let signIn: WebSignIn

    /// Checks the session, then hands the request on with ``SignInRequestContext/signedIn`` set.
    public func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard let id = request.cookies[signIn.sessionCookie]?.value, let key = try? signIn.key(forSession: id) else {
            return signInFirst(request)
        }
        let session = signIn.session(forKey: key)
        // Older than the session lifetime (or of no known age): ended here too, before any
        // refresh, so that a stolen cookie does not live on with refreshes.
        if let stored = try? await signIn.sessions.load(key), !signIn.isLive(stored) {
            do { try await session.logout(revoke: true) } catch { context.logger.info("web sign-in: ending an expired session: \(error.description)") }
            return signInFirst(request)
        }
        do {
            _ = try await session.validTokens()
        } catch {
            if !error.endsLogin { context.logger.info("web sign-in: the session's tokens could not be renewed: \(error.description)") }
            guard error.endsLogin else {
                return WebSignIn.page(.serviceUnavailable, "Your session could not be renewed just now. Try again in a moment.")
            }
            return signInFirst(request)
        }
        guard let login = try? await session.login, let csrf = login.attributes[SignedIn.csrfAttribute] else { return signInFirst(request) }
        var context = context
        context.signedIn = SignedIn(login: login, session: session, csrfToken: csrf)
        var response = try await next(request, context)
        // A signed-in page is this user's: no shared cache keeps it.
        if response.headers[.cacheControl] == nil { response.headers[.cacheControl] = "no-store" }
        return response
    }

    func signInFirst(_ request: Request) -> Response {
        guard request.method == .get || request.method == .head else {
            return WebSignIn.page(.unauthorized, "Sign in first, at \(signIn.loginPath).")
        }
        let back = WebSignIn.localPath(request.uri.description) ?? "/"
        var response = Response.redirect(to: signIn.loginPath + "?return=" + FormURLEncoding.encode(value: back), type: .found)
        response.headers[.cacheControl] = "no-store"
        return response
    }
}

/// An HTML page as a handler's answer (`text/html; charset=utf-8`): escape what you put in it
/// with ``WebSignIn/escaped(_:)``.
public struct HTMLPage: ResponseGenerator {
    /// The page's markup.
    public let html: String

    /// A page of this markup.
    public init(_ html: String) { self.html = html }

    /// The page with its content type.
    public func response(from request: Request, context: some RequestContext) -> Response {
        Response(status: .ok, headers: [.contentType: "text/html; charset=utf-8"], body: ResponseBody(byteBuffer: ByteBuffer(string: html)))
    }
}
