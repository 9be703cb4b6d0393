import Foundation
import Testing

/// No recipe in the repository's documentation, nor in `oidc proof --help`, puts a token or a DPoP
/// proof on a command line (`curl -H "Authorization: Bearer $(oidc token)"`): any local user reads
/// it in `/proc/PID/cmdline` while curl runs (security review 4, L3). The recipes use
/// `curl --oauth2-bearer`, which curl blanks, or headers piped to `curl -H @-`.
@Suite("docs put no token on a command line")
struct DocsTokenArgumentTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// A `-H` argument whose header value is a shell expansion (`$(…)`, `$TOKEN`, `${…}`) of a token
    /// (`Authorization: <scheme> $…`) or a proof (`DPoP: $…`).
    static var tokenInHeaderArgument: Regex<Substring> { #/-H\s*["']?\s*(?:Authorization:\s*[A-Za-z]+\s+|DPoP:\s*)\$/# }

    /// The offending lines of `text`, each with its line number.
    static func offending(_ text: String) -> [(line: Int, text: String)] {
        text.split(separator: "\n", omittingEmptySubsequences: false).enumerated().compactMap { index, line in
            line.contains(tokenInHeaderArgument) ? (index + 1, String(line)) : nil
        }
    }

    /// Every Markdown file of the repository, outside build folders and hidden ones.
    static func markdownFiles() -> [URL] {
        guard let walker = FileManager.default.enumerator(at: root, includingPropertiesForKeys: [.isDirectoryKey]) else { return [] }
        var files: [URL] = []
        for case let url as URL in walker {
            let name = url.lastPathComponent
            if (try? url.resourceValues(forKeys: [.isDirectoryKey]).isDirectory) == true {
                if name.hasPrefix(".") || name == "node_modules" { walker.skipDescendants() }
            } else if name.hasSuffix(".md") {
                files.append(url)
            }
        }
        return files
    }

    @Test("the check itself: it finds the old recipes and passes the new ones")
    func pattern() {
        #expect(Self.offending(#"curl -fsS -H "Authorization: Bearer $(oidc token --profile work)" https://api.example.com/me"#).count == 1)
        #expect(Self.offending(#"curl -H "Authorization: DPoP $(oidc token)" -H "DPoP: $(oidc proof --method GET --url U)" U"#).count == 1)
        #expect(Self.offending(#"curl -H 'Authorization: Bearer $TOKEN' U"#).count == 1)
        #expect(Self.offending(#"curl -fsS --oauth2-bearer "$(oidc token --profile work)" https://api.example.com/me"#).isEmpty)
        #expect(Self.offending(#"printf 'Authorization: DPoP %s\nDPoP: %s\n' "$(oidc token)" "$(oidc proof --method GET --url U)" | curl -H @- U"#).isEmpty)
    }

    @Test("no Markdown file in the repository puts a token or a proof in a curl -H argument")
    func markdown() throws {
        let files = Self.markdownFiles()
        #expect(files.contains { $0.path.hasSuffix("/docs/cli.md") }, "the docs were not found from \(Self.root.path)")
        for file in files {
            let text = try String(contentsOf: file, encoding: .utf8)
            for (line, content) in Self.offending(text) {
                Issue.record("\(file.path.dropFirst(Self.root.path.count + 1)):\(line) puts a token on curl's command line: \(content)")
            }
        }
    }

    @Test("oidc proof --help shows no recipe with the proof or the token in a -H argument, and names the safe forms")
    func proofHelp() async throws {
        let help = try await OIDCBinary.run(["proof", "--help"])
        #expect(help.status == 0, "\(help.stderr)")
        // argument-parser wraps the discussion: join the lines before looking.
        let text = help.stdout.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.joined(separator: " ")
        #expect(Self.offending(text).isEmpty, "\(help.stdout)")
        #expect(text.contains("-H @-") && text.contains("/proc"), "\(help.stdout)")
    }
}
