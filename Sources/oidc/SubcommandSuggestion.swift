import OIDC

/// A mistyped subcommand (`oidc tokn --profile work`, `oidc help stauts`), found before the
/// arguments are parsed: otherwise the parser blames the first option the root command does not
/// know (`Unknown option '--profile'`), or says only `Unexpected argument 'tokn'`.
enum SubcommandSuggestion {
    /// The message for `arguments` (without the program's name) when the word where a subcommand
    /// belongs is none: "unknown command 'tokn'; did you mean 'token'?", with the list of commands
    /// when nothing is close. `nil` when the arguments name a subcommand, or none at all.
    static func problem(in arguments: [String], commands: [String]) -> String? {
        var words = arguments[...]
        // The root command's own flags (-v, -vv, --verbose) may come first; `--` ends the options.
        // The parser's --generate-completion-script takes a shell's name: no command follows it.
        while let first = words.first, first.hasPrefix("-"), first != "-", first != "--" {
            if first == "--generate-completion-script" { return nil }
            words = words.dropFirst()
        }
        guard var word = words.first, word != "--" else { return nil }
        if word == "help" {
            guard let next = words.dropFirst().first, !next.hasPrefix("-") else { return nil }
            word = next
        }
        guard !commands.contains(word) else { return nil }
        let shown = UntrustedText.sanitized(word, limit: 40)
        if let close = closest(to: word, among: commands) {
            return "oidc: error: unknown command '\(shown)'; did you mean '\(close)'? (oidc --help lists the commands)"
        }
        return "oidc: error: unknown command '\(shown)'; the commands are: \(commands.joined(separator: ", "))"
    }

    /// The command nearest to `word`: the same letters without dashes or case (`log-in`), else one
    /// at an edit distance of at most 2 (a transposition counts 1), else the one it begins.
    static func closest(to word: String, among commands: [String]) -> String? {
        let folded = word.lowercased().filter { $0 != "-" && $0 != "_" }
        if let same = commands.first(where: { $0.filter { $0 != "-" } == folded }) { return same }
        let scored = commands.map { ($0, distance(Array(folded), Array($0))) }.filter { $0.1 <= min(2, max(1, $0.0.count / 3)) }
        if let best = scored.min(by: { $0.1 < $1.1 }) { return best.0 }
        guard folded.count >= 3 else { return nil }
        return commands.first { $0.hasPrefix(folded) }
    }

    /// The optimal-string-alignment distance: insertions, deletions, substitutions and adjacent
    /// transpositions each cost 1. Words here are short: at most 40 characters are compared.
    static func distance(_ a: [Character], _ b: [Character]) -> Int {
        let a = Array(a.prefix(40)), b = Array(b.prefix(40))
        guard !a.isEmpty else { return b.count }
        guard !b.isEmpty else { return a.count }
        var table = [[Int]](repeating: [Int](repeating: 0, count: b.count + 1), count: a.count + 1)
        for i in 0...a.count { table[i][0] = i }
        for j in 0...b.count { table[0][j] = j }
        for i in 1...a.count {
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                table[i][j] = min(table[i - 1][j] + 1, table[i][j - 1] + 1, table[i - 1][j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    table[i][j] = min(table[i][j], table[i - 2][j - 2] + 1)
                }
            }
        }
        return table[a.count][b.count]
    }
}
