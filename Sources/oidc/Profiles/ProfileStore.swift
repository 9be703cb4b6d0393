import Foundation
import OIDC
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where profiles live: `$XDG_CONFIG_HOME/oidc/profiles/NAME.json`, else
/// `~/.config/oidc/profiles/NAME.json`; directory 0700, files 0600, replaced atomically.
struct ProfileStore {
    static let maximumSize = 64 * 1024
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

    func path(of name: String) -> String { directory + "/" + PrivateFile.fileName(for: name) + ".json" }

    /// The profile called `name`, or `nil` when there is none.
    ///
    /// - Throws: a storage error naming the file when it exists but cannot be read or understood.
    func load(_ name: String) throws -> Profile? {
        let path = path(of: name)
        // A profile decides which browser runs, where tokens are kept and which hosts get them: like
        // the token store, take only a regular file of this user that nobody else can write, and
        // read the very file that was checked (one descriptor, no link followed).
        guard let data = try PrivateFile.read(path, limit: Self.maximumSize) else { return nil }
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
        try PrivateFile.write(bytes, named: PrivateFile.fileName(for: name) + ".json", in: directory)
    }

    /// The names of every saved profile, sorted.
    func names() -> [String] {
        let files = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        return files.filter { $0.hasSuffix(".json") }.compactMap { file in
            String(file.dropLast(5)).removingPercentEncoding.flatMap { PrivateFile.fileName(for: $0) + ".json" == file ? $0 : nil }
        }.sorted()
    }
}
