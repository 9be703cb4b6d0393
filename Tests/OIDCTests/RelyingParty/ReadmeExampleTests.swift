import Foundation
import Testing

/// The README's library example is a program a user writes from the README alone: it is
/// Examples/TerminalLogin's Quickstart.swift, which that example's tests run against TestProvider
/// with the system browser. This keeps the two the same text.
@Suite("The README's library example")
struct ReadmeExampleTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    @Test("the README's first Swift block under 'Library' is Examples/TerminalLogin's Quickstart.swift, word for word")
    func readmeMatchesTheExample() throws {
        let readme = try String(contentsOf: Self.root.appendingPathComponent("README.md"), encoding: .utf8)
        let library = try #require(readme.range(of: "## Library\n"))
        let rest = readme[library.upperBound...]
        let open = try #require(rest.range(of: "```swift\n"))
        let close = try #require(rest[open.upperBound...].range(of: "\n```"))
        let block = String(rest[open.upperBound..<close.lowerBound])
        let program = try String(
            contentsOf: Self.root.appendingPathComponent("Examples/TerminalLogin/Sources/TerminalLogin/Quickstart.swift"), encoding: .utf8
        )
        #expect(block == program.trimmingCharacters(in: .newlines))
        #expect(!block.contains("package ") && !block.contains("@testable"), "the example uses public API only")
    }
}
