internal import Foundation

/// Browser commands as `$BROWSER` and `--browser` write them: words split on spaces (no shell, no
/// quoting), `%s` for the URL and `%%` for a literal `%`.
enum BrowserCommand {
    /// The placeholder for the URL in a command's words.
    static let placeholder = "%s"

    /// The words of `command`, with `%s` appended as the last word when no word holds one.
    /// `nil` for a command with no word.
    static func template(_ command: String) -> [String]? {
        let words = command.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
        guard !words.isEmpty else { return nil }
        return words.contains(where: hasPlaceholder) ? words : words + [placeholder]
    }

    /// The commands of a colon-separated `$BROWSER`, in order; empty entries skipped.
    static func templates(browserVariable: String) -> [[String]] {
        browserVariable.split(separator: ":").compactMap { template(String($0)) }
    }

    /// `word` with each `%s` replaced by `url` and each `%%` by `%`.
    static func substitute(_ word: String, url: String) -> String {
        var result = ""
        var iterator = word.makeIterator()
        while let character = iterator.next() {
            guard character == "%" else {
                result.append(character)
                continue
            }
            switch iterator.next() {
            case "s": result += url
            case "%": result += "%"
            case let other?: result += "%" + String(other)
            case nil: result += "%"
            }
        }
        return result
    }

    /// Whether `word` has a `%s` that is not an escaped `%%` followed by `s`.
    static func hasPlaceholder(_ word: String) -> Bool {
        substitute(word, url: "\u{0}") != substitute(word, url: "\u{1}")
    }

    /// The executable for `name`: a name with a `/` is a path; otherwise the first executable file
    /// of that name in the directories of `path` (empty entries skipped: no current directory).
    static func resolve(_ name: String, path: String?) -> String? {
        if name.contains("/") {
            return FileManager.default.isExecutableFile(atPath: name) ? name : nil
        }
        for directory in (path ?? "").split(separator: ":") where !directory.isEmpty {
            let candidate = directory.hasSuffix("/") ? "\(directory)\(name)" : "\(directory)/\(name)"
            var isDirectory: ObjCBool = false
            if FileManager.default.fileExists(atPath: candidate, isDirectory: &isDirectory), !isDirectory.boolValue,
                FileManager.default.isExecutableFile(atPath: candidate)
            {
                return candidate
            }
        }
        return nil
    }
}
