import Synchronization
import Testing
import WebSignInDemo

@Suite("Examples/WebSignIn")
struct WebSignInTests {
    @Test("the demo: sign in at the provider, reload, a forged sign-out refused, sign out, sign in again")
    func demo() async throws {
        let said = Mutex<[String]>([])
        try await Demo.run { line in said.withLock { $0.append(line) } }
        let lines = said.withLock { $0 }
        #expect(lines.count == 6, "\(lines)")
        #expect(lines.last?.hasPrefix("5. GET / again") == true)
    }
}
