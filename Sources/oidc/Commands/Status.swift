import ArgumentParser
import Foundation
import OIDC

/// `oidc status`: who is logged in, where, until when. Never a token.
struct Status: AsyncParsableCommand, LoggingCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show who is logged in: subject, issuer, expiry, scopes, whether it can refresh. Never a token.",
        discussion: """
            Exits 0 when the profile's login can give a token (it is valid, or can be refreshed), 4 \
            when it cannot: not logged in, or expired with no way to refresh (it says how to log in \
            again). With --all: 0 when any login can.
            """
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
            let stored = Set(try keychain.keys().filter { $0.service == StoreOptions.service }.map(\.account))
            names.formUnion(stored)
            for name in names.sorted() {
                var options = storeOptions
                options.profile = name
                let entry = Self.describeOrExplain(options)
                entries.append(entry)
                // A login in this store that the profile no longer points to (it moved to another
                // store): shown too, marked superseded, never out of sight (review 3, M3).
                if stored.contains(name), let shown = entry["store"] as? String, shown != keychain.directory.path {
                    options.store = keychain.directory.path
                    entries.append(Self.describeOrExplain(options))
                }
            }
        } else {
            entries.append(try Self.describe(storeOptions))
        }
        let usable = entries.contains { $0["can_give_token"] as? Bool == true }
        if all, entries.isEmpty {
            // Nothing stored and no profile: say where it looked and how to begin (F24).
            let directory = try storeOptions.keychain(profile: nil).directory.path
            switch output {
            case .json: Console.output("[]")
            case .text:
                Console.output("no profiles and no logins in \(directory); log in with: oidc login --profile NAME --issuer URL --client-id ID (or --resource URL)")
            }
            throw ExitCode(ExitCodes.authenticationFailed)
        }
        switch output {
        case .json:
            let value: Any = all ? entries : entries[0]
            let data = try JSONSerialization.data(withJSONObject: value, options: [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes])
            Console.output(JSONOutput.safe(String(decoding: data, as: UTF8.self)))
        case .text:
            Console.output(entries.map(Self.text).joined(separator: "\n"))
        }
        if !usable {
            // A login that is there but cannot give a token says so where scripts look (F8).
            if !all, output == .text, let again = entries[0]["log_in_again"] as? String {
                let name = ProfileName.shown(storeOptions.profileName)
                if entries[0]["logged_in"] as? Bool == true {
                    Console.error("oidc: the login of profile '\(name)' has expired and cannot be refreshed; log in again with: \(again)")
                } else {
                    // Not logged in (never, or logged out): how to, as `oidc token` says it (review 5 of issue 35, N1).
                    Console.error("oidc: profile '\(name)' is not logged in; log in with: \(again)")
                }
            }
            throw ExitCode(ExitCodes.authenticationFailed)
        }
    }

    /// ``describe(_:)``, or what makes the profile or login unreadable: one does not hide the others.
    static func describeOrExplain(_ options: StoreOptions) -> [String: Any] {
        do { return try describe(options) } catch {
            let message = (error as? OIDCError)?.message ?? "\(error)"
            return ["profile": options.profileName, "logged_in": false, "can_give_token": false, "error": message]
        }
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
            entry["can_give_token"] = false
            entry["issuer"] = profile?.issuer.map { UntrustedText.sanitized($0) }
            entry["client_id"] = profile?.clientID.map { UntrustedText.sanitized($0) }
            entry["log_in_again"] = LoginAgain.command(profile: options.profileName, saved: profile, login: nil, store: options.store)
            return entry
        }
        entry["logged_in"] = true
        // A hostile resource's issuer or registered client id may carry terminal controls (review 5, L1).
        entry["issuer"] = UntrustedText.sanitized(login.issuer)
        entry["client_id"] = UntrustedText.sanitized(login.clientID)
        entry["resource"] = login.resource.map { UntrustedText.sanitized($0) }
        entry["subject"] = login.subject.map { UntrustedText.sanitized($0) }
        entry["scopes"] = login.tokens.scopes.map { UntrustedText.sanitized($0) }
        // RFC 9396: what the tokens were granted for, as the provider said (controls escaped on output).
        entry["authorization_details"] = login.tokens.authorizationDetails.flatMap { try? JSONSerialization.jsonObject(with: Data($0.jsonText.utf8)) }
        let stored = ProfileLogin(options: options.selection, profile: profile, keychain: keychain, login: login)
        if let profile, let current = try Self.pointsElsewhere(profile, from: login, in: keychain, name: options.profileName) {
            entry["superseded"] = true
            entry["profile_points_to"] = current
        }
        if let grant = login.grant, login.renewsByOwnGrant || grant.type == .ciba { entry["grant_type"] = grant.type.rawValue }
        if DeviceGrant.made(login) { entry["grant_type"] = DeviceGrant.grant.rawValue }
        if let reason = DeviceGrant.missingIDTokenReason(login) { entry["no_id_token"] = reason }
        let refreshable = (login.tokens.refreshToken != nil || login.renewsByOwnGrant) && StoredProvider.configuration(of: login) != nil
            && !stored.lacksSecret(file: nil)
        entry["refreshable"] = refreshable
        var expired = false
        if let expiry = login.tokens.expiresAt {
            expired = expiry <= CLIClock.now()
            entry["expires_at"] = ExecCredential.rfc3339(expiry)
            entry["expired"] = expired
        }
        entry["can_give_token"] = !expired || refreshable
        entry["log_in_again"] = stored.loginAgain
        if let idExpiry = Token.idTokenExpiry(login.tokens) { entry["id_token_expires_at"] = ExecCredential.rfc3339(idExpiry) }
        return entry
    }

    /// Where the profile points now (`issuer`, `client_id`, `store`) when `login`, kept in `keychain`
    /// under its name, is not that login: of another issuer or client, or in another store than
    /// the profile's own. `nil` when it is the profile's login.
    static func pointsElsewhere(_ profile: Profile, from login: StoredLogin, in keychain: FileKeychain, name: String) throws -> [String: String]? {
        let own = try StoreSelection(store: nil, profile: name).keychain(profile: profile).directory.path
        guard !profile.configures(login) || own != keychain.directory.path else { return nil }
        var current = ["store": own]
        current["issuer"] = profile.configuredIssuer
        current["client_id"] = profile.clientID
        return current
    }

    static func text(_ entry: [String: Any]) -> String {
        // A name stored by an older version may hold a control character: shown as `?` (F17).
        let name = ProfileName.shown(entry["profile"] as? String ?? "default")
        if let error = entry["error"] as? String { return "profile \(name): unreadable: \(error)" }
        guard entry["logged_in"] as? Bool == true else {
            return "profile \(name): not logged in\(entry["issuer"].map { " (issuer \($0))" } ?? "")"
        }
        let cannot = entry["can_give_token"] as? Bool == false
        let who = if entry["grant_type"] as? String == ClientCredentialsRequest.grant.rawValue {
            "client \(UntrustedText.sanitized(entry["client_id"] as? String ?? "?")) has its own tokens (client credentials)"
        } else if entry["grant_type"] as? String == GrantType.jwtBearer.rawValue {
            "client \(UntrustedText.sanitized(entry["client_id"] as? String ?? "?")) has tokens for its assertion (JWT bearer grant)"
        } else if entry["resource"] != nil, entry["subject"] == nil {
            "logged in, subject unknown: no ID token (a plain OAuth server)"
        } else if let reason = entry["no_id_token"] as? String {
            "logged in, subject unknown: no ID token (\(reason))"
        } else {
            "logged in as \(entry["subject"] as? String ?? "an unknown subject")"
        }
        var lines = ["profile \(name): \(who)"]
        lines.append("  issuer:      \(entry["issuer"] ?? "")")
        lines.append("  client id:   \(entry["client_id"] ?? "")")
        if let resource = entry["resource"] as? String { lines.append("  resource:    \(resource)") }
        if let expiry = entry["expires_at"] as? String {
            lines.append("  expires:     \(expiry)\(entry["expired"] as? Bool == true ? " (expired)" : "")")
        } else {
            lines.append("  expires:     not stated")
        }
        lines.append("  scopes:      \((entry["scopes"] as? [String] ?? []).joined(separator: " "))")
        if let details = entry["authorization_details"] as? [[String: Any]] {
            let types = details.compactMap { $0["type"] as? String }.map { UntrustedText.sanitized($0, limit: 64) }
            lines.append("  authorization details: \(types.joined(separator: ", ")) (oidc token --output authorization-details)")
        }
        lines.append("  refreshable: \(entry["refreshable"] as? Bool == true ? "yes" : "no")")
        if cannot {
            lines.append("  state:       expired and not refreshable: no token can be had; log in again with: \(entry["log_in_again"] ?? "oidc login")")
        }
        lines.append("  store:       \(entry["store"] ?? "")")
        if entry["superseded"] as? Bool == true, let current = entry["profile_points_to"] as? [String: String] {
            var now = [current["issuer"].map { "issuer \($0)" }, current["client_id"].map { "client id \($0)" }].compactMap { $0 }
            now.append("store \(current["store"] ?? "")")
            lines.append("  superseded:  profile '\(name)' now points to \(now.joined(separator: ", ")); its client secret file is used only for that issuer and client")
        }
        return lines.joined(separator: "\n")
    }
}
