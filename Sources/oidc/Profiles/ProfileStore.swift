import Foundation
import OIDC
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where profiles live: `$XDG_CONFIG_HOME/oidc/profiles/NAME.json`, else
/// `~/.config/oidc/profiles/NAME.json`; directory 0700, files 0600, replaced atomically.
///
/// The directory is held to the token store's rule (review 3, L5): reading, listing or writing
/// profiles is refused (exit 7, saying to `chmod 700`) when the directory is not the user's or
/// other users may enter it. Anyone who can write there can rename or swap the user's profile
/// files, and a swapped file, still the user's own, passes every check of the file itself: which
/// profile names which secret file, browser command or allowed hosts would be theirs to choose.
struct ProfileStore {
    static let maximumSize = 64 * 1024
    /// How the directory is named in messages.
    static let description = "profiles directory"
    let directory: String

    /// The store of `environment`'s `XDG_CONFIG_HOME` or `HOME`; the process's own when `nil`.
    init(environment: [String: String]? = nil) throws {
        func variable(_ name: String) -> String? {
            if let environment { return environment[name] }
            return getenv(name).map { String(cString: $0) }
        }
        if let config = variable("XDG_CONFIG_HOME"), config.hasPrefix("/") {
            directory = config + "/oidc/profiles"
        } else if let home = variable("HOME"), home.hasPrefix("/") {
            directory = home + "/.config/oidc/profiles"
        } else {
            throw OIDCError(.storageFailure, "Neither XDG_CONFIG_HOME nor HOME is an absolute path, so there is no place for profiles: set one of them.")
        }
    }

    func path(of name: String) -> String { directory + "/" + fileName(of: name) }

    private func fileName(of name: String) -> String { PrivateFile.fileName(for: name) + ".json" }

    /// The profile called `name`, or `nil` when there is none.
    ///
    /// - Throws: a storage error naming the file when it exists but cannot be read or understood.
    func load(_ name: String) throws -> Profile? {
        let path = path(of: name)
        // A profile decides which browser runs, where tokens are kept and which hosts get them: like
        // the token store, take only a regular file of this user that nobody else can write, and
        // read the very file that was checked (one descriptor, no link followed).
        guard let data = try PrivateFile.read(fileName(of: name), inPrivate: directory, description: Self.description, limit: Self.maximumSize) else {
            return nil
        }
        do { return try Profile(serialized: data) } catch {
            throw OIDCError(
                .corruptStore, "The profile file \(path) is unreadable: \(error.reason). Fix or remove it, then log in again with the profile's flags.",
                context: ["path": path]
            )
        }
    }

    func save(_ profile: Profile, as name: String) throws {
        let bytes: [UInt8]
        do { bytes = try profile.serialized() } catch {
            throw OIDCError(.storageFailure, "The profile '\(name)' could not be serialized.")
        }
        try PrivateFile.write(bytes, named: fileName(of: name), inPrivate: directory, description: Self.description)
    }

    /// The names of every saved profile, sorted.
    ///
    /// - Throws: a storage error when the directory is refused or cannot be listed.
    func names() throws -> [String] {
        let files = try PrivateFile.names(inPrivate: directory, description: Self.description)
        return files.filter { $0.hasSuffix(".json") }.compactMap { file in
            String(file.dropLast(5)).removingPercentEncoding.flatMap { fileName(of: $0) == file ? $0 : nil }
        }.sorted()
    }
}
