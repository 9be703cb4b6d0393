import Foundation
import OIDC

/// A new login over a live one (F11): the store says which login each save replaced, read under the
/// lock that save holds, and the replaced login's refresh token is revoked (RFC 7009) once the new
/// login is stored. Two logins of one profile at once each revoke what they replaced, so one grant
/// is left: the last saved. And before any of it (F4): the store and the profiles directory must
/// take files, or nothing is asked for.
struct LoginReplacement: Sendable {
    let recorder = ReplacedLogins()

    /// Checks, before a browser opens or a grant is asked for, that the token store and the
    /// profiles directory take files; says where else to keep them when not.
    ///
    /// - Throws: ``OIDCError/Code/storageFailure`` (exit 7) naming the path, what failed, and
    ///   `--store DIR`, `OIDC_STORE`, `XDG_STATE_HOME` and `XDG_CONFIG_HOME`.
    static func requireWritable(_ keychain: FileKeychain, profiles: ProfileStore) throws {
        do { try keychain.requireWritable() } catch {
            throw OIDCError(
                .storageFailure,
                "The token store cannot keep a login: \(error.message) Nothing was sent and no browser opened. Keep the tokens elsewhere: --store DIR, or OIDC_STORE=DIR, or XDG_STATE_HOME=DIR (the store is then DIR/oidc).",
                context: error.context)
        }
        do { try PrivateFile.requireWritable(inPrivate: profiles.directory, description: ProfileStore.description) } catch {
            throw OIDCError(
                .storageFailure,
                "The profiles directory cannot keep the profile: \(error.message) Nothing was sent and no browser opened. Set XDG_CONFIG_HOME=DIR to a writable directory (profiles go to DIR/oidc/profiles); --store DIR or OIDC_STORE=DIR moves the tokens.",
                context: error.context)
        }
    }

    /// Revokes the refresh token (else the access token) of each login the save of `stored`
    /// replaced, when it is another grant; says what happened, or `nil` when nothing was replaced.
    /// Best effort: a revocation that fails is said, and the new login stays.
    func revokeReplaced(
        by stored: StoredLogin, selection: StoreSelection, profiles: [Profile], keychain: FileKeychain, transport: NIOHTTPTransport
    ) async -> String? {
        let replaced = recorder.logins(for: selection.key).filter { old in
            old.tokens.refreshToken.map { $0 != stored.tokens.refreshToken } ?? (old.tokens.accessToken != stored.tokens.accessToken)
        }
        guard !replaced.isEmpty else { return nil }
        var notes: [String] = []
        for old in replaced {
            // The secret of the profile configured for the old login's issuer and client, never another's.
            let owner = profiles.first { $0.configures(old) }
            let login = ProfileLogin(options: selection, profile: owner, keychain: keychain, login: old)
            if login.lacksSecret(file: nil) {
                notes.append("not revoked (no client secret for \(UntrustedText.sanitized(old.clientID)) at hand), so it stays valid at the provider until it expires")
                continue
            }
            do {
                notes.append(await Logout.revoke(old, client: try login.tokenClient(transport: transport, clientSecretFile: nil)))
            } catch {
                notes.append("not revoked (\((error as? OIDCError)?.message ?? "\(error)")), so it stays valid at the provider until it expires")
            }
        }
        return "replaced the earlier login of profile '\(selection.profileName)': \(notes.joined(separator: "; "))"
    }
}
