import ArgumentParser
import Foundation
import OIDC
import OIDCTesting
import SchibstedLogin

@main
struct SchibstedLoginCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "schibsted-login",
        abstract: "Logs in to Schibsted account as an app does, with the redirect URLs pasted in.",
        discussion: """
            Open the printed URL in a browser and log in. The browser then tries to open your app's \
            redirect URI (com.example.app:/login?code=…): copy that URL from the address bar and paste \
            it here. With --demo, a local provider stands in for the pre environment and the demo \
            plays the browser, including a BankID return to the app before the real redirect.
            """
    )

    @Option(help: "pre, sweden, norway, finland, denmark (or their SDK names), or an https base URL.")
    var environment = "pre"

    @Option(help: "Your client id (default: the Schibsted SDK's example client on pre).")
    var clientID = "602525f2b41fa31789a95aa8"

    @Option(help: "The redirect URI registered for the client (default: the SDK example client's).")
    var redirectURI = "com.sdk-example.pre.602525f2b41fa31789a95aa8:/login"

    @Option(help: "MFA method: password, otp, sms, eid (eid-se, eid-no, eid-fi, eid-dk on pre).")
    var mfa: String?

    @Flag(help: "Log in to a local stand-in for the pre environment.")
    var demo = false

    @Option(help: "Where the login is kept (default: $XDG_STATE_HOME/oidc or ~/.local/state/oidc).")
    var store: String?

    func run() async throws {
        guard let environment = Schibsted.Environment(name: environment) else {
            throw ValidationError("Unknown --environment '\(self.environment)'.")
        }
        let method = try mfa.map { name in
            guard let method = Schibsted.MFAMethod(rawValue: name) else { throw ValidationError("Unknown --mfa '\(name)'.") }
            return method
        }
        let keychain = try FileKeychain(directory: store.map { URL(fileURLWithPath: $0) })
        try await withNIOHTTPTransport { transport in
            var login = SchibstedLogin(
                environment: environment, clientID: clientID, redirectURI: redirectURI, mfa: method, keychain: keychain,
                transport: transport
            )
            if demo {
                try await runDemo(&login, transport: transport)
            } else {
                try await runInteractively(login)
            }
        }
    }

    private func runInteractively(_ login: SchibstedLogin) async throws {
        let request = try login.start()
        print("Open this URL in a browser and log in:\n\n\(try request.url())\n")
        print("Then paste the URL your browser was sent to (\(redirectURI)?…):")
        while let line = readLine(strippingNewline: true) {
            guard let url = URL(string: line.trimmingCharacters(in: .whitespaces)) else { continue }
            if try await report(login.handle(url, for: request), login) { return }
        }
        throw ExitCode(3)
    }

    private func runDemo(_ login: inout SchibstedLogin, transport: NIOHTTPTransport) async throws {
        let client = TestProvider.Client(id: clientID, redirectURIs: [redirectURI])
        // A user who completed the MFA asked for: the stand-in puts it in the ID token's amr.
        var user = TestUser.default
        if let mfa = login.mfa { user.amr = ["pwd", mfa.amrValue] }
        try await withTestProvider(TestProvider.Configuration(clients: [client], user: user)) { provider in
            login.standIn(
                issuer: provider.issuer, authorizationEndpoint: URL(string: provider.authorizationEndpoint)!,
                tokenEndpoint: URL(string: provider.tokenEndpoint)!, jwksURI: URL(string: provider.jwksURI)!
            )
            print("A stand-in for Schibsted's \(login.environment) environment runs at \(provider.issuer).")
            let request = try login.start()
            let url = try request.url()
            print("Authorization URL (the preset's parameters, in the SDK's order):\n  \(url)")

            // BankID returns to the app first: that URL must be ignored, the login goes on.
            let bankID = URL(string: redirectURI + "/bankId")!
            print("The app receives \(bankID)")
            _ = try await report(login.handle(bankID, for: request), login)

            // The browser follows the provider's redirect back to the app.
            let answer = try await transport.send(HTTPRequest(url: url))
            guard answer.status == 302, let location = answer.headers["Location"], let callback = URL(string: location) else {
                throw ValidationError("The stand-in did not redirect back (HTTP \(answer.status)).")
            }
            print("The app receives \(callback.absoluteString.prefix(redirectURI.count))?code=…&state=…")
            _ = try await report(login.handle(callback, for: request), login)
        }
    }

    /// Prints what a step means; `true` once the login is over.
    private func report(_ step: SchibstedLogin.Step, _ login: SchibstedLogin) -> Bool {
        switch step {
        case .keepWaiting:
            print("  → BankID returned to the app: ignored, still waiting for the login.")
            return false
        case .notOurs:
            print("  → not this login's redirect URI; paste the URL that starts with \(redirectURI).")
            return false
        case .cancelled:
            print("  → you cancelled the login.")
            return true
        case .loggedIn(let stored):
            print("  → logged in as \(stored.subject ?? "?"), ID token verified (X-OIDC: v1 sent, MFA checked in amr).")
            print("Kept under \(login.key) in \(login.keychain.directory.path).")
            return true
        }
    }
}
