internal import Foundation
public import OIDC

/// The promises of `TokenStore`, checked against your store: run it from a test of a keychain,
/// Redis or database store, as the library runs it against `FileKeychain`, `InMemoryTokenStore`
/// and `PostgresTokenStore`.
///
/// ```swift
/// @Test func conforms() async throws {
///     try await TokenStoreConformance.run { try MyRedisStore(url: testURL, prefix: "conformance") }
/// }
/// ```
///
/// `makeStore` returns a value over the same storage each time it is called: the checks use
/// several at once, as the instances of a server share one table. (For `InMemoryTokenStore`,
/// return one instance.) Start from empty storage. Every check waits on events, never on a
/// clock; a lock that is never granted ends the check after ``waitLimit``.
///
/// What is checked (``Check``): a missing login loads as `nil` and deletes without an error; a
/// saved login loads back equal, a save replaces it, a delete forgets it; keys stay apart, odd
/// ones included; a reader never sees a mix of two saves; `withLock` excludes concurrent tasks and
/// values, with `load` and `save` usable inside; it returns its body's value and passes on its
/// error, releasing the lock either way; the locks of two keys are independent; a waiter gets the
/// lock only after the holder's body has ended; `deleteLogins` deletes exactly the logins of a
/// session or a user (skipped for a store without it). What a store does about time limits and
/// cancellation is its own choice, not checked here.
public enum TokenStoreConformance {
    /// One promise of `TokenStore`.
    public enum Check: String, CaseIterable, Sendable {
        /// A missing login loads as `nil`; deleting it is no error.
        case missingLogin = "a missing login loads as nil and deletes without an error"
        /// A saved login loads back equal; a second save replaces it; a delete forgets it.
        case roundTrip = "a saved login loads back equal; a save replaces it; a delete forgets it"
        /// Keys are separate, odd ones (slashes, dots, spaces, Unicode, `%`, quotes) included.
        case separateKeys = "keys stay apart, odd ones included, and each round-trips"
        /// A reader running beside a writer sees a whole login of one save, never a mix.
        case atomicSave = "a reader beside a writer sees one whole save, never a mix"
        /// `withLock` lets one task in at a time, across store values; `load` and `save` work inside it.
        case lockExcludes = "withLock excludes concurrent tasks and store values; load and save work inside"
        /// `withLock` returns the body's value, passes its error on, and releases either way.
        case lockReleases = "withLock returns the body's value, passes its error on, and releases either way"
        /// The lock of one key does not block another key's.
        case locksPerKey = "the lock of one key does not block another key's"
        /// A task waiting for the lock enters only after the holder's body has ended.
        case lockHandsOver = "a waiter enters only after the holder's body has ended"
        /// `deleteLogins` deletes exactly the logins of an issuer's session (`sid`) or user (`sub`),
        /// of one client when given, across store values; a login keeps its session id. Skipped
        /// for a store that does not implement `deleteLogins` (the protocol's default throws).
        case deleteLogins = "deleteLogins deletes exactly an issuer's session or user's logins, across store values"
    }

    /// The checks that failed, with what was seen.
    public struct Failure: Error, CustomStringConvertible, Sendable {
        /// One line per problem: the check, then what was seen.
        public let problems: [String]

        /// The problems as one message, one line each.
        public var description: String {
            "The store breaks \(problems.count) promise(s) of TokenStore:\n" + problems.map { "- " + $0 }.joined(separator: "\n")
        }
    }

    /// How long a check waits for a lock or a task before it calls the promise broken: 60 s.
    public static let waitLimit: Duration = .seconds(60)

    /// Runs `checks` (all by default) in turn, each under keys of its own, and throws a ``Failure``
    /// listing every broken promise. Errors the store throws where it should not count as broken
    /// promises, with their text.
    ///
    /// - Parameters:
    ///   - checks: the checks to run.
    ///   - makeStore: a store value over the shared storage (see ``TokenStoreConformance``).
    public static func run(
        _ checks: [Check] = Check.allCases, makeStore: @escaping @Sendable () async throws -> any TokenStore
    ) async throws {
        let problems = await self.problems(checks, makeStore: makeStore)
        if !problems.isEmpty { throw Failure(problems: problems) }
    }

    /// The broken promises, one line each (the check, then what was seen); empty when the store
    /// keeps them all. For a test that wants them one by one:
    ///
    ///     for problem in await TokenStoreConformance.problems(makeStore: { store }) { Issue.record(Comment(rawValue: problem)) }
    public static func problems(
        _ checks: [Check] = Check.allCases, makeStore: @escaping @Sendable () async throws -> any TokenStore
    ) async -> [String] {
        let run = UUID().uuidString.prefix(8).lowercased()
        var problems: [String] = []
        for check in checks {
            let context = CheckContext(makeStore: makeStore, prefix: "oidc-conformance-\(run)-\(check)")
            do {
                try await context.run(check)
            } catch let broken as Broken {
                problems.append("\(check.rawValue): \(broken.message)")
            } catch {
                problems.append("\(check.rawValue): the store threw \(String(describing: error))")
            }
        }
        return problems
    }
}

/// A broken promise, in words.
struct Broken: Error {
    let message: String
    init(_ message: String) { self.message = message }
}
