internal import Foundation
internal import OIDC
internal import Synchronization

/// The provider's signing keys: the current RSA and EC pair, and earlier pairs still published.
struct KeyRing: Sendable {
    struct Generation: Sendable {
        let rsa: TestSigningKey
        let ec: TestSigningKey
    }

    private(set) var current: Generation
    /// Earlier generations, newest first.
    private(set) var retired: [Generation] = []
    private var counter = 1

    init() throws {
        current = try Self.generation(1)
    }

    /// New RSA and EC keys with new `kid`s; `retaining` earlier generations stay published.
    mutating func rotate(retaining: Int) throws {
        counter += 1
        let next = try Self.generation(counter)
        retired.insert(current, at: 0)
        retired = Array(retired.prefix(max(0, retaining)))
        current = next
    }

    func signingKey(_ algorithm: TestProvider.IDTokenAlgorithm) -> TestSigningKey {
        switch algorithm {
        case .rs256: current.rsa
        case .es256: current.ec
        }
    }

    /// `{"keys": [...]}` with every published key: current first.
    func jwks() throws -> [String: Any] {
        var keys: [[String: Any]] = []
        for generation in [current] + retired {
            keys.append(try generation.rsa.publicJWK())
            keys.append(try generation.ec.publicJWK())
        }
        return ["keys": keys]
    }

    /// `kid`s are `rsa-N-xxxxxxxx` / `ec-N-xxxxxxxx`: the generation and a random tag, so two
    /// providers in one test run never share a `kid`. A provider's first RSA key comes from
    /// ``StartingRSAKeys``; a rotation makes new ones.
    private static func generation(_ number: Int) throws -> Generation {
        let tag = try LibCrypto.randomBytes(count: 4).map { String(format: "%02x", $0) }.joined()
        let rsaID = "rsa-\(number)-\(tag)"
        return Generation(
            rsa: number == 1 ? try StartingRSAKeys.shared.next(keyID: rsaID) : try TestSigningKey.generate(.rs256, keyID: rsaID),
            ec: try TestSigningKey.generate(.es256, keyID: "ec-\(number)-\(tag)")
        )
    }
}

/// The first RSA keys of the providers of one process, made once and taken in turn: an RSA 2048
/// key takes OpenSSL a few hundred milliseconds of CPU, most of what starting a provider costs, and
/// a test suite starts hundreds. Eight keys, so that providers started one after another have
/// different keys; each provider still names its key with a `kid` of its own, so a token of one is
/// never found among another's keys. Rotated keys (``TestProvider/rotateKeys()``) are
/// always new.
///
/// Each key is made once even when hundreds of providers start together: the first provider to
/// take an empty slot makes its key while the others of that slot wait for it, instead of each
/// making one of its own and keeping the first.
final class StartingRSAKeys: Sendable {
    static let shared = StartingRSAKeys()
    static let count = 8

    /// One key, made on first use.
    private final class Slot: Sendable {
        let key = Mutex<TestSigningKey?>(nil)
    }

    private let slots = (0..<StartingRSAKeys.count).map { _ in Slot() }
    private let turn = Mutex(0)

    /// The next key of the turn, under `keyID`; made first when its slot is still empty.
    func next(keyID: String) throws -> TestSigningKey {
        let slot = slots[turn.withLock { turn in
            defer { turn += 1 }
            return turn % Self.count
        }]
        let key = try slot.key.withLock { key throws -> TestSigningKey in
            if let key { return key }
            let made = try TestSigningKey.generate(.rs256)
            key = made
            return made
        }
        return key.withKeyID(keyID)
    }
}
