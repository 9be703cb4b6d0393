// The FileKeychain tests' helper process (not a product).
//
//   oidc-store-writer DIR SERVICE ACCOUNT COUNT [lock]
//       saves COUNT logins, generation 0 to COUNT-1, each self-checking (access token "gen-N",
//       attribute "check" = N, a padding attribute of several KiB derived from N), each inside
//       withLock when `lock` is given. The tests kill it at random moments.
//   oidc-store-writer DIR SERVICE ACCOUNT hold MILLISECONDS
//       takes the lock, prints "locked", sleeps, saves generation "held", releases.
//   oidc-store-writer DIR SERVICE ACCOUNT block MILLISECONDS
//       takes the lock, prints "locked", sleeps, releases without writing (a start barrier for
//       processes that must all be waiting on the lock at once).
//
// Runs with umask 0, to show that the store's modes do not depend on the umask. Prints "started"
// before its first write.
import Foundation
import HelperSupport
import OIDC

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Generation `generation`'s login; the tests rebuild it to check what they read back.
func login(_ generation: String) -> StoredLogin {
    var padding = ""
    while padding.utf8.count < 6000 { padding += generation + "|" }
    return StoredLogin(
        tokens: TokenSet(
            accessToken: Secret("gen-" + generation), refreshToken: Secret("refresh-" + generation),
            receivedAt: Date(timeIntervalSince1970: 1_800_000_000)
        ),
        issuer: "https://issuer.example", clientID: "writer",
        attributes: ["check": generation, "padding": padding]
    )
}

let arguments = CommandLine.arguments
guard arguments.count >= 5 else { fail("usage: DIR SERVICE ACCOUNT COUNT [lock] | DIR SERVICE ACCOUNT hold MILLISECONDS") }
_ = umask(0)
let key = TokenStoreKey(service: arguments[2], account: arguments[3])
let store: FileKeychain
do {
    store = try FileKeychain(directory: URL(fileURLWithPath: arguments[1], isDirectory: true))
} catch {
    fail("\(error)")
}

do {
    if arguments[4] == "block" {
        guard arguments.count == 6, let milliseconds = Int(arguments[5]) else { fail("block needs MILLISECONDS") }
        try await store.withLock(key) {
            say("locked")
            try await Task.sleep(for: .milliseconds(milliseconds))
        }
    } else if arguments[4] == "hold" {
        guard arguments.count == 6, let milliseconds = Int(arguments[5]) else { fail("hold needs MILLISECONDS") }
        try await store.withLock(key) {
            say("locked")
            try await Task.sleep(for: .milliseconds(milliseconds))
            try store.save(login("held"), for: key)
        }
    } else {
        guard let count = Int(arguments[4]), count >= 0 else { fail("COUNT must be a number") }
        let locking = arguments.count > 5 && arguments[5] == "lock"
        say("started")
        for generation in 0..<count {
            if locking {
                try await store.withLock(key) { try store.save(login(String(generation)), for: key) }
            } else {
                try store.save(login(String(generation)), for: key)
            }
        }
    }
} catch {
    fail("\(error)")
}
