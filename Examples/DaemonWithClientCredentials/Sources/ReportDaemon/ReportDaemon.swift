import Foundation
import Logging
import OIDC

/// A daemon that calls an API with its own tokens: this client at the provider (one
/// `RelyingParty`) and its service session, which asks for a token with the client's credentials
/// (RFC 6749 §4.4) when it has none or the token expires, once for every concurrent caller and,
/// with a shared store, once for every process; and sends it to the API's host only.
public struct ReportDaemon: Sendable {
    /// This daemon at the provider: its client id and authentication.
    public let relyingParty: RelyingParty
    /// Holds the token and sends the API requests with it.
    public let session: AuthenticatedSession
    /// The API it calls.
    public let api: URL

    /// A daemon of `relyingParty` calling `api`, its token kept in `store` (this process's memory
    /// by default; a `FileKeychain` shares one token between processes).
    public init(relyingParty: RelyingParty, api: URL, scopes: [String] = [], store: any TokenStore = InMemoryTokenStore()) {
        self.relyingParty = relyingParty
        self.api = api
        session = relyingParty.serviceSession(scopes: scopes, allowlist: .default(for: api), store: store)
    }

    /// The daemon `configuration` describes: its key or secret read, the provider discovered.
    /// Nothing is asked of the token endpoint yet.
    ///
    /// - Throws: ``ConfigurationError`` for a credential file that cannot be used; `OIDCError`
    ///   from discovery (the issuer unreachable, or not the one its metadata names).
    public static func start(
        _ configuration: DaemonConfiguration, transport: any HTTPTransport = NIOHTTPTransport.shared, logger: Logger? = nil
    ) async throws -> ReportDaemon {
        let authentication = try configuration.credential.authentication()
        let relyingParty = try await RelyingParty.discover(
            issuer: configuration.issuer, clientID: configuration.clientID, authentication: authentication, transport: transport, logger: logger
        )
        var store: any TokenStore = InMemoryTokenStore()
        if let directory = configuration.tokenDirectory { store = try FileKeychain(directory: directory, logger: logger) }
        return ReportDaemon(relyingParty: relyingParty, api: configuration.api, scopes: configuration.scopes, store: store)
    }

    /// `client report-daemon at https://login.example.com, private_key_jwt (JWSSigningKey(ES256, kid: k1))`:
    /// never a secret or a key.
    public var summary: String {
        "client \(relyingParty.clientID) at \(relyingParty.provider.issuer), \(relyingParty.tokenClient.authentication)"
    }

    /// One round of the job: `parallel` GET requests to the API at once. The session asks for a
    /// token once for all of them, when it has none or it is about to expire; a 401 makes it ask
    /// for a new one once, and retry.
    ///
    /// - Throws: the first request's `OIDCError`: `providerError` `invalid_client` when the
    ///   provider refuses the credentials, a transient code (network, 5xx) when a later round may
    ///   do better.
    public func round(parallel: Int = 1) async throws(OIDCError) -> Round {
        let results = await withTaskGroup(of: Result<HTTPResponse, OIDCError>.self) { group in
            for _ in 0..<max(parallel, 1) {
                group.addTask { [session, api] in
                    do throws(OIDCError) { return .success(try await session.send(HTTPRequest(url: api))) } catch { return .failure(error) }
                }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        let responses = try results.map { result throws(OIDCError) in try result.get() }
        let expiry = try await session.validTokens().expiresAt
        return Round(url: api, statuses: responses.map(\.status), firstBody: responses.first.map { Self.printable($0.body) } ?? "", tokenExpiry: expiry)
    }

    /// What one round did: no token, no header, only statuses, the start of one answer and when
    /// the token expires.
    public struct Round: Sendable, CustomStringConvertible {
        public let url: URL
        public let statuses: [Int]
        /// The start of the first answer's body, control characters dropped.
        public let firstBody: String
        public let tokenExpiry: Date?

        public var description: String {
            let counts = Dictionary(grouping: statuses, by: { $0 }).sorted { $0.key < $1.key }.map { "\($0.key) ×\($0.value.count)" }
            let expiry = tokenExpiry.map { "token valid until \($0.formatted(.iso8601))" } ?? "token of unknown lifetime"
            return "\(statuses.count) × GET \(url.absoluteString) → \(counts.joined(separator: ", ")); \(expiry)\n    \(firstBody)"
        }
    }

    /// Asks the provider about the token the daemon holds (RFC 7662 token introspection,
    /// authenticated as the daemon): a preflight that shows what the token allows before a long job
    /// starts, as the API would see it when it introspects.
    public func checkToken() async throws(OIDCError) -> TokenIntrospection {
        let tokens = try await session.validTokens()
        return try await relyingParty.tokenClient.introspect(tokens.accessToken, hint: .accessToken)
    }

    /// `active: client report-daemon, subject report-daemon, scope reports.read, expires …`.
    public static func describe(_ check: TokenIntrospection) -> String {
        guard check.active else { return "not active: the provider no longer accepts this token" }
        var parts = ["active"]
        if let client = check.clientID { parts.append("client \(client)") }
        if let subject = check.subject { parts.append("subject \(subject)") }
        parts.append("scope \(check.scopes.map { $0.isEmpty ? "(none)" : $0.joined(separator: " ") } ?? "(not said)")")
        if let expiry = check.expiresAt { parts.append("expires \(expiry.formatted(.iso8601))") }
        return parts.joined(separator: ", ")
    }

    /// At most 300 characters of `body`, one line, without control characters.
    static func printable(_ body: [UInt8]) -> String {
        let text = String(decoding: body.prefix(300), as: UTF8.self)
        return String(String.UnicodeScalarView(text.unicodeScalars.filter { !CharacterSet.controlCharacters.contains($0) }))
    }
}

/// Exit statuses a service manager can act on (sysexits.h): systemd's `RestartPreventExitStatus=77 78`
/// stops restarting a daemon whose configuration or credentials are wrong, and keeps restarting it
/// after an outage.
public enum DaemonExit {
    public static let temporaryFailure: Int32 = 75  // EX_TEMPFAIL: try again later
    public static let refused: Int32 = 77  // EX_NOPERM: the provider or the API refused the daemon
    public static let configuration: Int32 = 78  // EX_CONFIG
    public static let storage: Int32 = 74  // EX_IOERR: the token directory
    public static let unexpected: Int32 = 1

    public static func status(for error: any Error) -> Int32 {
        switch error {
        case is ConfigurationError: return configuration
        case let error as OIDCError:
            switch error.category {
            case .transient: return temporaryFailure
            case .provider, .security: return refused
            case .configuration, .transport: return configuration
            case .storage: return storage
            case .cancelled, .internal: return unexpected
            }
        default: return unexpected
        }
    }

    /// Whether a later round may succeed with nothing changed: the network, a 5xx, a timeout.
    public static func isTransient(_ error: any Error) -> Bool {
        (error as? OIDCError)?.category == .transient
    }
}
