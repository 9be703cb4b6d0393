/// Small private files beside the token store, such as the `oidc` command's profiles: written the
/// way ``FileKeychain`` writes logins (directory 0700, file 0600 from creation, atomic replace).
package enum PrivateFile {
    /// Replaces `name` in `directory` atomically with `bytes`, creating the directory (0700) first.
    ///
    /// - Throws: ``OIDCError/Code/storageFailure`` naming the path and what failed.
    package static func write(_ bytes: [UInt8], named name: String, in directory: String) throws(OIDCError) {
        try KeychainIO.makeDirectories(directory)
        try KeychainIO.replace(directory + "/" + name, with: bytes, directory: directory)
    }

    /// The percent-encoded file-name form of `text` that ``FileKeychain`` uses: never contains `/`,
    /// never `.` or `..`, and different texts give different names.
    package static func fileName(for text: String) -> String { FileNames.encode(text) }
}
