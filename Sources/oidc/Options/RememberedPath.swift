import Foundation

/// Paths as a profile remembers them: absolute, so that a later command run from another
/// directory reads the same files (`--client-secret-file`, `--private-key-file`, `--ca-file`,
/// `--store`, …) and runs the same browser.
enum RememberedPath {
    /// `path` from the current directory, unless it is absolute already.
    static func absolute(_ path: String) -> String {
        path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
    }

    /// A browser command whose program is a relative path (`./open.sh`) with the current directory,
    /// so a later login from elsewhere does not run another directory's file; other commands as
    /// they are.
    static func absoluteCommand(_ command: String) -> String {
        let trimmed = command.drop(while: \.isWhitespace)
        guard let program = trimmed.split(separator: " ").first, program.contains("/"), !program.hasPrefix("/") else { return command }
        return absolute(String(program)) + trimmed.dropFirst(program.count)
    }
}
