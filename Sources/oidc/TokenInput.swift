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

extension TokenInput {
    /// A secret given as itself, as `@FILE`, or as `-` for standard input: the file and standard
    /// input keep it out of `ps` and the shell's history.
    static func secret(_ argument: String, flag: String) throws -> String {
        guard argument.hasPrefix("@") else { return try read(argument) }
        let path = String(argument.dropFirst())
        guard let data = FileManager.default.contents(atPath: path) else { throw ValidationError("\(flag): cannot read '\(path)'") }
        guard data.count <= maximumLength else { throw ValidationError("\(flag): '\(path)' is over 1 MiB") }
        let value = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard !value.isEmpty else { throw ValidationError("\(flag): '\(path)' is empty") }
        return value
    }

    /// At most one argument may read standard input.
    static func checkOneStandardInput(_ arguments: [(flag: String, value: String?)]) throws {
        let readers = arguments.filter { $0.value == "-" }.map(\.flag)
        if readers.count > 1 { throw ValidationError("\(readers.joined(separator: " and ")) cannot both read standard input; use @FILE for one") }
    }
}
