import ArgumentParser
import Foundation
import OIDC

/// `oidc status`: who is logged in, where, until when. Never a token.
struct Status: AsyncParsableCommand, LoggingCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show who is logged in: subject, issuer, expiry, scopes, whether it can refresh. Never a token.",
        discussion: "Exits 0 when the profile is logged in, 4 when it is not (with --all: 0 when any is)."
    )

    @OptionGroup var logging: LoggingOptions

    enum Output: String, ExpressibleByArgument, CaseIterable {
        case text, json
    }

    @OptionGroup var storeOptions: StoreOptions

    @Flag(help: "Every login in the store, and every saved profile.")
    var all = false

    @Option(help: "text or json.")
    var output: Output = .text

    func run() async throws {
        var entries: [[String: Any]] = []
        if all {
            let profiles = try ProfileStore()
            var names = Set(try profiles.names())
            let keychain = try storeOptions.keychain(profile: try? storeOptions.savedProfile())
            for key in try keychain.keys() where key.service == StoreOptions.service { names.insert(key.account) }
            for name in names.sorted() {
                var options = storeOptions
                options.profile = name
                do { entries.append(try Self.describe(options)) } catch let error as OIDCError {
                    // One unreadable profile or login does not hide the others.
                    entries.append(["profile": name, "logged_in": false, "error": error.message])
                }
            }
        } else {
            entries.append(try Self.describe(storeOptions))
        }
        let loggedIn = entries.contains { $0["logged_in"] as? Bool == true }
        switch output {
        case .json:
            let value: Any = all ? entries : entries[0]
            let data = try JSONSerialization.data(withJSONObject: value, options: [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes])
            Console.output(JSONOutput.safe(String(decoding: data, as: UTF8.self)))
        case .text:
            Console.output(entries.map(Self.text).joined(separator: "\n"))
        }
        if !loggedIn { throw ExitCode(ExitCodes.authenticationFailed) }
    }

    /// One profile's status as JSON-ready values; no token ever. Text from the provider (the
    /// subject, the scope values) is sanitized: this is for a terminal (review 3, L3).
    static func describe(_ options: StoreOptions) throws -> [String: Any] {
        let profile = try options.savedProfile()
        let keychain = try options.keychain(profile: profile)
        var entry: [String: Any] = ["profile": options.profileName, "store": keychain.directory.path]
        entry["provider"] = profile?.provider.rawValue
        guard let login = try keychain.load(options.key) else {
            entry["logged_in"] = false
            entry["issuer"] = profile?.issuer
            entry["client_id"] = profile?.clientID
            return entry
        }
        entry["logged_in"] = true
        entry["issuer"] = login.issuer
        entry["client_id"] = login.clientID
        entry["subject"] = login.subject.map { UntrustedText.sanitized($0) }
        entry["scopes"] = login.tokens.scopes.map { UntrustedText.sanitized($0) }
        let stored = ProfileLogin(options: options.selection, profile: profile, keychain: keychain, login: login)
        entry["refreshable"] = login.tokens.refreshToken != nil && StoredProvider.configuration(of: login) != nil && !stored.lacksSecret(file: nil)
        if let expiry = login.tokens.expiresAt {
            entry["expires_at"] = ExecCredential.rfc3339(expiry)
            entry["expired"] = expiry <= Date()
        }
        if let idExpiry = Token.idTokenExpiry(login.tokens) { entry["id_token_expires_at"] = ExecCredential.rfc3339(idExpiry) }
        return entry
    }

    static func text(_ entry: [String: Any]) -> String {
        let name = entry["profile"] as? String ?? "default"
        if let error = entry["error"] as? String { return "profile \(name): unreadable: \(error)" }
        guard entry["logged_in"] as? Bool == true else {
            return "profile \(name): not logged in\(entry["issuer"].map { " (issuer \($0))" } ?? "")"
        }
        var lines = ["profile \(name): logged in as \(entry["subject"] as? String ?? "an unknown subject")"]
        lines.append("  issuer:      \(entry["issuer"] ?? "")")
        lines.append("  client id:   \(entry["client_id"] ?? "")")
        if let expiry = entry["expires_at"] as? String {
            lines.append("  expires:     \(expiry)\(entry["expired"] as? Bool == true ? " (expired)" : "")")
        } else {
            lines.append("  expires:     not stated")
        }
        lines.append("  scopes:      \((entry["scopes"] as? [String] ?? []).joined(separator: " "))")
        lines.append("  refreshable: \(entry["refreshable"] as? Bool == true ? "yes" : "no")")
        lines.append("  store:       \(entry["store"] ?? "")")
        return lines.joined(separator: "\n")
    }
}
