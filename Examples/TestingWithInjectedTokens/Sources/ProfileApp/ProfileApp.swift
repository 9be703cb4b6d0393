import Foundation
import OIDC

/// An imaginary app: it shows the signed-in user's name, read from its API with the stored
/// login's access token, or its login screen when nobody is signed in.
public actor ProfileApp {
    /// What the app shows.
    public enum Screen: Sendable, Equatable {
        case profile(name: String)
        case login
        /// The API or the provider cannot be reached now; the user stays signed in.
        case offline
    }

    public nonisolated let session: AuthenticatedSession
    public nonisolated let api: URL
    public private(set) var screen: Screen = .login

    /// The app as it starts: the login kept under `key` in `store`, refreshed at `issuer`'s token
    /// endpoint (found by discovery) for `clientID`, refreshed ID tokens verified.
    public static func start(
        issuer: String, clientID: String, api: URL, store: any TokenStore, key: TokenStoreKey, transport: any HTTPTransport
    ) async throws -> ProfileApp {
        let rp = try await RelyingParty.discover(issuer: issuer, clientID: clientID, transport: transport)
        return ProfileApp(session: rp.session(store: store, key: key, allowlist: .default(for: api)), api: api)
    }

    public init(session: AuthenticatedSession, api: URL) {
        self.session = session
        self.api = api
    }

    /// Loads the profile; what the app shows afterwards.
    @discardableResult
    public func reload() async -> Screen {
        do {
            guard try await session.login != nil else {
                screen = .login
                return screen
            }
            let response = try await session.send(HTTPRequest(url: api))
            guard response.status == 200 else {
                screen = response.status == 401 ? .login : .offline
                return screen
            }
            screen = .profile(name: Self.name(in: response.body) ?? "?")
        } catch let error as OIDCError {
            // A refused refresh has logged the user out: the login screen. Anything else (the
            // network, a 5xx) leaves the user signed in.
            screen = error.endsLogin ? .login : .offline
        } catch {
            screen = .offline
        }
        return screen
    }

    /// "Log out": revoke at the provider, forget the login.
    public func logOut() async throws {
        try await session.logout()
        screen = .login
    }

    private static func name(in body: [UInt8]) -> String? {
        let object = try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any]
        return object?["name"] as? String
    }
}
