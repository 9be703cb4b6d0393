/// A JSON Web Key Set (RFC 7517 §5) of verification keys.
///
/// Keys this library cannot use (another type, curve or size, a malformed member) are skipped, not
/// fatal: one odd key must not break verification with the others (the Schibsted SDK fails the whole
/// set on one EC key). The set itself must be a JSON object with a `keys` array.
public struct JWKSet: Sendable {
    /// The usable keys, in document order.
    public let keys: [JWK]
    /// Why each skipped key was skipped, in order.
    public let skipped: [String]

    /// A set of keys already built; nothing is skipped.
    public init(keys: [JWK]) {
        self.keys = keys
        self.skipped = []
    }

    /// Parses a JWKS document.
    ///
    /// - Parameters:
    ///   - json: the document's bytes (UTF-8 JSON).
    ///   - allowsSymmetricKeys: whether `oct` (HMAC) keys are kept. A provider's published
    ///     JWKS must never supply an HMAC key (RFC 8725 §3.1: a public document cannot hold a shared
    ///     secret, and using it would let anyone forge tokens), so ``JWKSCache`` reads with `false`; a
    ///     local file may hold one for HS* tests.
    /// - Throws: ``OIDCError/Code/invalidKey`` when the document is not a JSON object with a `keys` array.
    public init(json: [UInt8], allowsSymmetricKeys: Bool = true) throws(OIDCError) {
        let object: [String: JSONValue]
        do { object = try StrictJSONParser.parseObject(json) } catch {
            throw OIDCError(.invalidKey, "The JWKS is not a valid JSON object: \(error).")
        }
        guard let entries = object["keys"]?.arrayValue else {
            throw OIDCError(.invalidKey, "The JWKS has no 'keys' array.")
        }
        var keys: [JWK] = []
        var skipped: [String] = []
        for (index, entry) in entries.enumerated() {
            guard let member = entry.objectValue else {
                skipped.append("key \(index): not a JSON object")
                continue
            }
            if !allowsSymmetricKeys, member["kty"]?.stringValue == "oct" {
                skipped.append("key \(index): a symmetric (oct) key in a published JWKS is never used")
                continue
            }
            do { keys.append(try JWK(members: member)) } catch { skipped.append("key \(index): \(error.message)") }
        }
        self.keys = keys
        self.skipped = skipped
    }

    /// Parses a JWKS document.
    public init(json: String) throws(OIDCError) { try self.init(json: Array(json.utf8)) }

    /// The one key that should verify a token with this algorithm and key id.
    ///
    /// Candidates are the keys that can verify `algorithm` (type, curve, `use`, `key_ops`, `alg`) and,
    /// when the token names a `kid`, carry that `kid`.
    ///
    /// - Throws: ``OIDCError/Code/keyNotFound`` when none fits; ``OIDCError/Code/ambiguousKey`` when
    ///   several do (a token without `kid` against several keys, or a `kid` used twice).
    public func key(for algorithm: JWSAlgorithm, keyID: String?) throws(OIDCError) -> JWK {
        var found: JWK?
        for key in keys where key.mayVerify(algorithm) && (keyID == nil || key.keyID == keyID) {
            guard found == nil else {
                throw OIDCError(
                    .ambiguousKey,
                    keyID == nil
                        ? "The token names no key (kid) and several \(algorithm.rawValue) keys could verify it."
                        : "Several \(algorithm.rawValue) keys share the kid '\(UntrustedText.sanitized(keyID!, limit: 64))'.",
                    context: ["alg": algorithm.rawValue]
                )
            }
            found = key
        }
        guard let found else {
            var context = ["alg": algorithm.rawValue]
            if let keyID { context["kid"] = UntrustedText.sanitized(keyID, limit: 64) }
            throw OIDCError(.keyNotFound, "No key of the provider's JWKS can verify this \(algorithm.rawValue) token.", context: context)
        }
        return found
    }
}
