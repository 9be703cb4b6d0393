import ArgumentParser
import Foundation
import OIDC

/// `oidc logout`: revoke at the provider when it can, then delete the stored login.
struct Logout: AsyncParsableCommand, LoggingCommand {
    static let configuration = CommandConfiguration(
        abstract: "Log out: revoke the refresh token when the provider can (RFC 7009), then delete the stored login.",
        discussion: """
            The token revoked is the one the store holds, read under the store's lock, so a refresh \
            token another oidc process rotated a moment ago is the one revoked. The profile's settings \
            stay, so 'oidc login --profile NAME' logs in again. A revocation that fails (the provider \
            is down) still deletes the login here and says that the tokens stay valid until they expire. \
            A profile that is not logged in is no error: it says so and exits 0.
            """
    )

    @OptionGroup var logging: LoggingOptions

    @OptionGroup var storeOptions: StoreOptions

    @Flag(help: "Log out every profile in the store.")
    var all = false

    @Flag(help: "Delete without revoking.")
    var noRevoke = false

    @OptionGroup var credentials: StoredLoginCredentials

    @OptionGroup var tls: TLSOptions

    func validate() throws {
        if all, credentials.clientSecretFile != nil {
            throw ValidationError("--client-secret-file goes with one profile, not --all: a secret must not reach another provider")
        }
        if all, tls.clientCertificate != nil || tls.caFile != nil {
            throw ValidationError("--client-certificate, --client-key and --ca-file go with one profile, not --all (each profile's own are used)")
        }
    }

    func run() async throws {
        // A mistyped OIDC_HTTP_TIMEOUT is exit 2 before anything is deleted, as in every command:
        // otherwise the login would go and its revocation be skipped.
        _ = try NetworkTimeout.environment()
        guard all else {
            try await withNIOHTTPTransport(logger: CLILog.logger(.transport)) { transport in try await logOut(storeOptions, transport: transport) }
            return
        }
        let keychain = try storeOptions.keychain(profile: try? storeOptions.savedProfile())
        let names = try keychain.keys().filter { $0.service == StoreOptions.service }.map(\.account).sorted()
        if names.isEmpty { Console.error("oidc: no login is stored in \(keychain.directory.path)") }
        try await withNIOHTTPTransport(logger: CLILog.logger(.transport)) { transport in
            for name in names {
                var options = storeOptions
                options.profile = name
                try await logOut(options, transport: transport, store: keychain)
            }
        }
    }

    /// With `store` (--all), a profile whose settings cannot be read is still logged out of that store.
    private func logOut(_ options: StoreOptions, transport: NIOHTTPTransport, store: FileKeychain? = nil) async throws {
        let profile: Profile?
        if let store {
            do { profile = try options.savedProfile() } catch let error as OIDCError {
                Console.error("oidc: warning: \(error.message) Logging profile '\(ProfileName.shown(options.profileName))' out of \(store.directory.path) without it.")
                profile = nil
            }
        } else {
            profile = try options.savedProfile()
        }
        let keychain = try store ?? options.keychain(profile: profile)
        let key = options.key
        let secretFile = credentials.clientSecretFile
        let revoke = !noRevoke
        // Nothing stored and no lock file: nothing to lock either (a lock file would be left behind
        // for a profile that never existed). A login written meanwhile is as if written after. The
        // stat first: a profile that has been used has a lock file, and its login is read once, below.
        if !keychain.hasLockFile(key), try keychain.load(key) == nil {
            if !all { Console.error("oidc: profile '\(ProfileName.shown(options.profileName))' was not logged in; nothing to do") }
            return
        }
        let outcome: String? = try await keychain.withLock(key) {
            guard let login = try keychain.load(key) else { return nil }
            var note = "not revoked (--no-revoke)"
            if revoke {
                // The profile's secret only for the issuer and client it was configured for (review 3, M3).
                let stored = ProfileLogin(options: options.selection, profile: profile, keychain: keychain, login: login)
                if let reason = stored.withheldSecretReason, stored.lacksSecret(file: secretFile) {
                    note = "not revoked (\(reason)), so the tokens stay valid at the provider until they expire"
                } else {
                    do {
                        let configuration = try tls.transportConfiguration(over: stored.boundProfile)
                        if configuration.clientCertificate == nil, configuration.additionalTrustRootsPEM.isEmpty {
                            note = await Self.revoke(login, client: try stored.tokenClient(transport: transport, clientSecretFile: secretFile))
                        } else {
                            // The profile's own certificate and authority: mutual TLS at the revocation endpoint's alias.
                            note = try await withNIOHTTPTransport(configuration: configuration, logger: CLILog.logger(.transport)) { own in
                                await Self.revoke(login, client: try stored.tokenClient(transport: own, clientSecretFile: secretFile))
                            }
                        }
                    } catch let error as OIDCError {
                        // Logging out must not depend on a secret file that is gone: delete, and say so.
                        note = "not revoked (\(error.message)), so the tokens stay valid at the provider until they expire"
                    }
                }
            }
            try keychain.delete(key)
            return note
        }
        guard let outcome else {
            // Already out is what was asked for (F12): cleanup scripts run logout unconditionally.
            if !all { Console.error("oidc: profile '\(ProfileName.shown(options.profileName))' was not logged in; nothing to do") }
            return
        }
        Console.error("oidc: logged out profile '\(ProfileName.shown(options.profileName))'; \(outcome)")
    }

    /// Revokes the refresh token (or the access token when there is none); says what happened.
    static func revoke(_ login: StoredLogin, client: TokenClient?) async -> String {
        guard var client, client.provider.revocationEndpoint != nil else {
            return "the provider offers no revocation, so the tokens stay valid at the provider until they expire"
        }
        let (token, hint): (Secret, TokenClient.TokenTypeHint) =
            login.tokens.refreshToken.map { ($0, .refreshToken) } ?? (login.tokens.accessToken, .accessToken)
        // The store's lock is held meanwhile: a provider that hangs must not stall every oidc token for long.
        let timeout = (try? NetworkTimeout.environment()) ?? 10
        client.requestOptions.timeout = .seconds(timeout)
        do {
            try await client.revoke(token, hint: hint)
            return "the \(hint == .refreshToken ? "refresh" : "access") token was revoked at the provider"
        } catch {
            // The login is deleted whatever happens here: no advice to try again (there is nothing left to retry).
            if error.code == .timedOut {
                return "the revocation got no answer within \(timeout) s (OIDC_HTTP_TIMEOUT sets the wait), so the tokens stay valid at the provider until they expire"
            }
            var reason = error.message
            while reason.hasSuffix(".") { reason.removeLast() }
            return "the revocation failed (\(reason)), so the tokens stay valid at the provider until they expire"
        }
    }
}
