import Foundation
import Hummingbird
import OIDC
import WebApp
import WebSignInDemo

// web-sign-in: a web app whose users sign in at your OpenID provider.
//   OIDC_ISSUER=https://idp.example OIDC_CLIENT_ID=web-app OIDC_CLIENT_SECRET_FILE=secret swift run web-sign-in
// `web-sign-in --demo` runs a provider beside it and a browser's visit.
if CommandLine.arguments.dropFirst().first == "--demo" {
    do { try await Demo.run() } catch {
        FileHandle.standardError.write(Data("web-sign-in --demo: \(error)\n".utf8))
        exit(1)
    }
    exit(0)
}
func usage(_ problem: String) -> Never {
    FileHandle.standardError.write(Data("""
        web-sign-in: \(problem)
        usage: OIDC_ISSUER=URL OIDC_CLIENT_ID=ID [OIDC_CLIENT_SECRET_FILE=FILE] [PORT=8080] [APP_URL=URL] web-sign-in
               web-sign-in --demo

        """.utf8))
    exit(2)
}
let environment = ProcessInfo.processInfo.environment
guard let issuer = environment["OIDC_ISSUER"], let clientID = environment["OIDC_CLIENT_ID"] else { usage("set OIDC_ISSUER and OIDC_CLIENT_ID") }
guard let port = Int(environment["PORT"] ?? "8080"), (1...65535).contains(port) else { usage("PORT must be a port number (1 to 65535)") }
guard let base = URL(string: environment["APP_URL"] ?? "http://127.0.0.1:\(port)"), ["http", "https"].contains(base.scheme ?? "") else {
    usage("APP_URL must be the app's http or https URL")
}
var secret: Secret?
if let file = environment["OIDC_CLIENT_SECRET_FILE"] {
    guard let text = try? String(contentsOfFile: file, encoding: .utf8), !text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else {
        usage("OIDC_CLIENT_SECRET_FILE (\(file)) cannot be read, or is empty")
    }
    secret = Secret(text.trimmingCharacters(in: .whitespacesAndNewlines))
}
do {
    let relyingParty = try await RelyingParty.discover(issuer: issuer, clientID: clientID, clientSecret: secret)
    let app = Application(router: try WebApp.router(signingInWith: relyingParty, at: base), configuration: .init(address: .hostname("127.0.0.1", port: port)))
    // Unbuffered: a script reading the first line sees it at once.
    FileHandle.standardOutput.write(Data("web-sign-in: \(base) (register \(base.appending(path: "auth/callback")) as a redirect URI)\n".utf8))
    try await app.runService()
} catch {
    FileHandle.standardError.write(Data("web-sign-in: \(error)\n".utf8))
    exit(1)
}
