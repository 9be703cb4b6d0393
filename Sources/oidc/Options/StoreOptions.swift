import ArgumentParser
import Foundation
import Logging
import OIDC
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `--store DIR` and `--profile NAME`, with `OIDC_STORE` and `OIDC_PROFILE` as defaults.
///
/// The store directory is, in order: `--store`, the profile's remembered store, `$OIDC_STORE`, then
/// `$XDG_STATE_HOME/oidc` or `~/.local/state/oidc`.
struct StoreOptions: ParsableArguments {
    @Option(help: "The token store directory (default: the profile's, else $OIDC_STORE, else $XDG_STATE_HOME/oidc or ~/.local/state/oidc).")
    var store: String?

    @Option(help: "The profile name (default: $OIDC_PROFILE, else 'default').")
    var profile: String?

    static let service = StoreSelection.service

    /// The choice these options make, as a plain value (the fast path of `oidc token` builds one
    /// without the argument parser).
    var selection: StoreSelection { StoreSelection(store: store, profile: profile) }

    var profileName: String { selection.profileName }
    var key: TokenStoreKey { selection.key }
    var explicitStore: String? { selection.explicitStore }

    func validate() throws {
        if let profile { try ProfileName.validate(profile, from: "--profile") }
        if profile == nil, let reason = ProfileName.environmentRefusal() { throw ValidationError(reason) }
        if let store, store.isEmpty { throw ValidationError("--store must not be empty") }
    }

    func savedProfile() throws -> Profile? { try selection.savedProfile() }

    /// The store, logging to `oidc.store` (this runs only after the parser, so after ``CLILog/bootstrap(level:)``).
    func keychain(profile saved: Profile? = nil) throws -> FileKeychain {
        try selection.keychain(profile: saved, logger: CLILog.logger(.store))
    }
}

/// Which profile and which token store a command works on: `--store`, `--profile`, `OIDC_STORE`,
/// `OIDC_PROFILE`, and the profile's remembered store.
struct StoreSelection {
    static let service = "oidc"

    var store: String?
    var profile: String?

    var profileName: String {
        profile ?? Self.environment("OIDC_PROFILE") ?? "default"
    }

    var key: TokenStoreKey { TokenStoreKey(service: Self.service, account: profileName) }

    /// The store directory named by `--store` or `$OIDC_STORE`, if any (what a login remembers).
    var explicitStore: String? { store ?? Self.environment("OIDC_STORE") }

    /// The saved settings of the profile, or `nil` when it has none.
    func savedProfile() throws -> Profile? {
        try ProfileStore().load(profileName)
    }

    /// The store; `logger` `nil` (the fast path, which runs before logging is set up) logs nothing.
    ///
    /// `OIDC_TEST_STORE_FULL` (any value) makes its writes fail as on a full disk: for tests where no
    /// small file system can be mounted (an ordinary user; the installed build too, as
    /// `OIDC_TEST_CLOCK_OFFSET`).
    func keychain(profile saved: Profile? = nil, logger: Logger? = nil) throws -> FileKeychain {
        let directory = store ?? saved?.store ?? Self.environment("OIDC_STORE")
        var keychain = try FileKeychain(directory: directory.map { URL(fileURLWithPath: $0, isDirectory: true) }, logger: logger)
        if getenv("OIDC_TEST_STORE_FULL") != nil { keychain.simulatedFullDisk = true }
        return keychain
    }

    private static func environment(_ name: String) -> String? {
        guard let value = getenv(name) else { return nil }
        return value.pointee == 0 ? nil : String(cString: value)
    }
}
