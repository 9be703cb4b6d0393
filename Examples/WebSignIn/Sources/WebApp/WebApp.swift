import Foundation
import Hummingbird
import OIDC
import OIDCHummingbird

/// The web app: `/` is a signed-in page; `/auth/…` are the sign-in routes (OIDCHummingbird's
/// ``WebSignIn``); `/signed-out` is where the provider sends the browser after sign-out.
public enum WebApp {
    /// The routes of an app at `base` (its public URL) that signs its users in at `relyingParty`'s
    /// provider: the lines an app writes.
    public static func router(signingInWith relyingParty: RelyingParty, at base: URL) throws -> Router<BasicSignInRequestContext> {
        var signIn = try WebSignIn(relyingParty: relyingParty, redirectURI: base.appending(path: "auth/callback"))
        signIn.postLogoutRedirectURI = base.appending(path: "signed-out")
        let router = Router(context: BasicSignInRequestContext.self)
        signIn.addRoutes(to: router)
        router.get("signed-out") { _, _ in HTMLPage(#"<p>Signed out. <a href="/">Sign in again</a></p>"#) }
        router.group().add(middleware: signIn.requireSignIn()).get("/") { _, context in
            let user = try context.requireSignedIn()
            return HTMLPage("<h1>Hello, \(WebSignIn.escaped(user.subject ?? "you"))</h1>" + user.logoutForm())
        }
        return router
    }
}
