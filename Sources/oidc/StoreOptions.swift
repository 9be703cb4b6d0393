import ArgumentParser
import Foundation
import OIDC

/// `--store DIR` and `--profile NAME`, with `OIDC_STORE` and `OIDC_PROFILE` as defaults.
struct StoreOptions: ParsableArguments {
    @Option(help: "The token store directory (default: $OIDC_STORE, else $XDG_STATE_HOME/oidc or ~/.local/state/oidc).")
    var store: String?

    @Option(help: "The login's profile name (default: $OIDC_PROFILE, else 'default').")
    var profile: String?

    static let service = "oidc"

    var profileName: String {
        profile ?? ProcessInfo.processInfo.environment["OIDC_PROFILE"].flatMap { $0.isEmpty ? nil : $0 } ?? "default"
    }

    var key: TokenStoreKey { TokenStoreKey(service: Self.service, account: profileName) }

    func validate() throws {
        if let profile, profile.isEmpty { throw ValidationError("--profile must not be empty") }
        if let store, store.isEmpty { throw ValidationError("--store must not be empty") }
    }

    func keychain() throws -> FileKeychain {
        let directory = store ?? ProcessInfo.processInfo.environment["OIDC_STORE"].flatMap { $0.isEmpty ? nil : $0 }
        return try FileKeychain(directory: directory.map { URL(fileURLWithPath: $0, isDirectory: true) })
    }
}
