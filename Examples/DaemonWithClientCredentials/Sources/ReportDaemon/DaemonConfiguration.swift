import Foundation
import OIDC

/// What the daemon needs, from its environment (a systemd unit's `Environment=`, a CI job's
/// variables). Secrets are never in a variable: the variables name files that hold them.
///
/// | variable | |
/// | --- | --- |
/// | `OIDC_ISSUER` | the provider's issuer URL (discovery at `/.well-known/openid-configuration`) |
/// | `OIDC_CLIENT_ID` | this daemon's client id |
/// | `OIDC_PRIVATE_KEY_FILE` | its private key, PEM or a private JWK (`private_key_jwt`), or … |
/// | `OIDC_CLIENT_SECRET_FILE` | … its client secret (`client_secret_basic`): exactly one of the two |
/// | `OIDC_KEY_ID` | the `kid` of the key as registered (optional) |
/// | `OIDC_SCOPE` | the scopes to ask for, space-separated (optional) |
/// | `OIDC_TOKEN_DIR` | a directory where processes share one token (optional; else each keeps its own in memory) |
/// | `API_URL` | the API to call |
public struct DaemonConfiguration: Sendable, Equatable {
    /// How the daemon proves itself at the provider: a file it reads at start-up.
    public enum Credential: Sendable, Equatable {
        /// A private key (PEM or private JWK) that signs a `private_key_jwt` assertion per request
        /// (RFC 7523); the provider holds only its public half.
        case privateKeyFile(String, keyID: String?)
        /// A client secret, sent with HTTP Basic (RFC 6749 §2.3.1).
        case clientSecretFile(String)
    }

    public var issuer: String
    public var clientID: String
    public var credential: Credential
    public var scopes: [String]
    public var api: URL
    /// Where several processes (instances, cron runs) share one token; `nil`: this process only.
    public var tokenDirectory: URL?

    public init(issuer: String, clientID: String, credential: Credential, scopes: [String] = [], api: URL, tokenDirectory: URL? = nil) {
        self.issuer = issuer
        self.clientID = clientID
        self.credential = credential
        self.scopes = scopes
        self.api = api
        self.tokenDirectory = tokenDirectory
    }

    /// The configuration the variables describe.
    ///
    /// - Throws: ``ConfigurationError`` naming the variable that is missing or wrong.
    public init(environment: [String: String]) throws(ConfigurationError) {
        func value(_ name: String) -> String? {
            environment[name].map { $0.trimmingCharacters(in: .whitespaces) }.flatMap { $0.isEmpty ? nil : $0 }
        }
        func required(_ name: String, _ what: String) throws(ConfigurationError) -> String {
            guard let found = value(name) else { throw ConfigurationError(name, "not set; set it to \(what).") }
            return found
        }
        if environment["OIDC_CLIENT_SECRET"] != nil {
            // Environment variables end up in crash reports, `docker inspect` and CI logs.
            throw ConfigurationError(
                "OIDC_CLIENT_SECRET", "not read, a secret does not belong in the environment: put it in a file only you can read (chmod 600) and set OIDC_CLIENT_SECRET_FILE to its path.")
        }
        issuer = try required("OIDC_ISSUER", "the provider's issuer URL, such as https://login.example.com")
        clientID = try required("OIDC_CLIENT_ID", "this daemon's client id at the provider")
        switch (value("OIDC_PRIVATE_KEY_FILE"), value("OIDC_CLIENT_SECRET_FILE")) {
        case (let key?, nil):
            credential = .privateKeyFile(key, keyID: value("OIDC_KEY_ID"))
        case (nil, let secret?):
            guard value("OIDC_KEY_ID") == nil else {
                throw ConfigurationError("OIDC_KEY_ID", "set, and a client secret (OIDC_CLIENT_SECRET_FILE) has no key id: unset one of them.")
            }
            credential = .clientSecretFile(secret)
        case (nil, nil):
            throw ConfigurationError(
                "OIDC_PRIVATE_KEY_FILE", "not set, nor OIDC_CLIENT_SECRET_FILE: set one of them to the file with the daemon's private key or client secret.")
        case (_?, _?):
            throw ConfigurationError(
                "OIDC_CLIENT_SECRET_FILE", "set together with OIDC_PRIVATE_KEY_FILE: the daemon authenticates one way; unset one of them.")
        }
        scopes = value("OIDC_SCOPE").map { $0.split(separator: " ").map(String.init) } ?? []
        let apiText = try required("API_URL", "the URL of the API to call")
        guard let api = URL(string: apiText), let scheme = api.scheme?.lowercased(), ["https", "http"].contains(scheme), api.host != nil else {
            throw ConfigurationError("API_URL", "not an http(s) URL: '\(apiText)'.")
        }
        self.api = api
        if let directory = value("OIDC_TOKEN_DIR") {
            guard directory.hasPrefix("/") else { throw ConfigurationError("OIDC_TOKEN_DIR", "must be an absolute path, not '\(directory)'.") }
            tokenDirectory = URL(fileURLWithPath: directory, isDirectory: true)
        }
    }
}

extension DaemonConfiguration.Credential {
    /// The client authentication this credential makes, its file read now.
    ///
    /// - Throws: ``ConfigurationError`` naming the variable when the file is missing, readable by
    ///   others, or not a key or secret; never with the file's contents.
    public func authentication() throws(ConfigurationError) -> ClientAuthentication {
        switch self {
        case .privateKeyFile(let path, let keyID):
            do {
                return .privateKeyJWT(try JWSSigningKey(contentsOfFile: path, keyID: keyID))
            } catch {
                throw ConfigurationError("OIDC_PRIVATE_KEY_FILE", error.message)
            }
        case .clientSecretFile(let path):
            // Refused unless a regular file (not a link) of yours that no other user can read or write.
            do { return .clientSecretBasic(try Secret.fromFile(atPath: path)) } catch {
                throw ConfigurationError("OIDC_CLIENT_SECRET_FILE", error.message)
            }
        }
    }
}

/// A variable of the daemon's environment that is missing or wrong.
public struct ConfigurationError: Error, Equatable, CustomStringConvertible {
    /// The variable's name.
    public let variable: String
    /// What is wrong with it and what to do, after the name.
    public let problem: String

    public init(_ variable: String, _ problem: String) {
        self.variable = variable
        self.problem = problem
    }

    public var description: String { "\(variable): \(problem)" }
}
