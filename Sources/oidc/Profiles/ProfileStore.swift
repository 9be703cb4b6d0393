import Foundation
import OIDC

/// Where profiles live: `$XDG_CONFIG_HOME/oidc/profiles/NAME.json`, else
/// `~/.config/oidc/profiles/NAME.json`; directory 0700, files 0600, replaced atomically.
struct ProfileStore {
    static let maximumSize = 64 * 1024
    let directory: String

    init(environment: [String: String] = ProcessInfo.processInfo.environment) throws {
        if let config = environment["XDG_CONFIG_HOME"], config.hasPrefix("/") {
            directory = config + "/oidc/profiles"
        } else if let home = environment["HOME"], home.hasPrefix("/") {
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
        // the token store, take only a regular file of this user that nobody else can write.
        if let attributes = try? FileManager.default.attributesOfItem(atPath: path) {
            let type = attributes[.type] as? FileAttributeType
            let owner = (attributes[.ownerAccountID] as? NSNumber)?.uint32Value
            let mode = (attributes[.posixPermissions] as? NSNumber)?.intValue ?? 0o777
            guard type == .typeRegular, owner == getuid(), mode & 0o022 == 0 else {
                throw OIDCError(
                    .storageFailure,
                    "The profile file \(path) is refused: it must be a regular file (not a link) of yours that no one else can write (chmod 600).",
                    context: ["path": path]
                )
            }
        }
        guard let data = FileManager.default.contents(atPath: path) else {
            if FileManager.default.fileExists(atPath: path) {
                throw OIDCError(.storageFailure, "The profile file \(path) cannot be read: check its permissions.", context: ["path": path])
            }
            return nil
        }
        guard data.count <= Self.maximumSize else {
            throw OIDCError(.corruptStore, "The profile file \(path) is over 64 KiB; it is not a profile. Remove it and log in again.", context: ["path": path])
        }
        do { return try Profile(serialized: Array(data)) } catch {
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
