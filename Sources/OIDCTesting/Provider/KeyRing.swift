internal import Foundation
internal import OIDC

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
    /// providers in one test run never share a `kid`.
    private static func generation(_ number: Int) throws -> Generation {
        let tag = try LibCrypto.randomBytes(count: 4).map { String(format: "%02x", $0) }.joined()
        return Generation(
            rsa: try TestSigningKey.generate(.rs256, keyID: "rsa-\(number)-\(tag)"),
            ec: try TestSigningKey.generate(.es256, keyID: "ec-\(number)-\(tag)")
        )
    }
}
