internal import OIDC
internal import Synchronization

/// Proof keys already built, by thumbprint: a client signs every proof with the same key, and
/// building an OpenSSL key from a JWK costs about as much as a verification. Bounded: when full,
/// the table starts over (a miss costs one build, never a wrong answer: a thumbprint names the
/// key's material exactly).
final class DPoPKeyCache: Sendable {
    static let capacity = 4_096
    private let keys = Mutex<[String: JWK]>([:])

    /// The key whose thumbprint is `thumbprint`, built from `members` when not cached.
    func key(thumbprint: String, members: [String: JSONValue]) throws(OIDCError) -> JWK {
        if let cached = keys.withLock({ $0[thumbprint] }) { return cached }
        // Only the members the thumbprint covers: the key is then exactly what the thumbprint names.
        var canonical: [String: JSONValue] = [:]
        for name in ["kty", "crv", "x", "y", "n", "e"] { canonical[name] = members[name] }
        let key = try JWK(members: canonical)
        keys.withLock { table in
            if table.count >= Self.capacity { table.removeAll(keepingCapacity: true) }
            table[thumbprint] = key
        }
        return key
    }
}
