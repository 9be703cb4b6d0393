import ArgumentParser
import Foundation

/// A token given on the command line, or `-` to read it from standard input (tokens can exceed the
/// argument size limit, and arguments are visible to other users in `ps`).
enum TokenInput {
    static let maximumLength = 1 << 20

    static func read(_ argument: String) throws -> String {
        guard argument == "-" else { return argument.trimmingCharacters(in: .whitespacesAndNewlines) }
        let data = FileHandle.standardInput.readData(ofLength: maximumLength + 1)
        guard data.count <= maximumLength else { throw ValidationError("the token on standard input is over 1 MiB") }
        guard let text = String(data: data, encoding: .utf8) else { throw ValidationError("the token on standard input is not UTF-8") }
        let token = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !token.isEmpty else { throw ValidationError("no token on standard input") }
        return token
    }
}
