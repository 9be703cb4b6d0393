public import Testing

/// One test at a time against the glewlwyd instance `scripts/glewlwyd.sh` starts, across every
/// suite and test target of the process.
///
/// glewlwyd 2.7.5 keeps its state in SQLite and answers concurrent token requests with a 500 now
/// and then (its log: `FOREIGN KEY constraint failed` on `gpo_access_token_scope`, then
/// `serialize_access_token` fails). `.serialized` orders the tests of one suite only; the suites
/// of several files and targets still ran at once. This trait gives each test of a suite that
/// carries it the instance to itself, in the order the tests ask.
public struct GlewlwydExclusive: SuiteTrait, TestTrait, TestScoping {
    public var isRecursive: Bool { true }

    public func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        // The suite itself gets no scope of its own: only its test cases take the instance.
        guard testCase != nil else { return try await function() }
        await GlewlwydTurns.shared.acquire()
        do {
            try await function()
        } catch {
            await GlewlwydTurns.shared.release()
            throw error
        }
        await GlewlwydTurns.shared.release()
    }
}

extension Trait where Self == GlewlwydExclusive {
    /// Each test has the glewlwyd instance to itself (see ``GlewlwydExclusive``).
    public static var glewlwydExclusive: GlewlwydExclusive { GlewlwydExclusive() }
}

/// A first-come, first-served lock for async code.
actor GlewlwydTurns {
    static let shared = GlewlwydTurns()
    private var held = false
    private var waiting: [CheckedContinuation<Void, Never>] = []

    func acquire() async {
        guard held else {
            held = true
            return
        }
        await withCheckedContinuation { waiting.append($0) }
    }

    func release() {
        if waiting.isEmpty {
            held = false
        } else {
            waiting.removeFirst().resume()
        }
    }
}
