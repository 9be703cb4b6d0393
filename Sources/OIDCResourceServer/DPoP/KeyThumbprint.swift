internal import OIDC

/// RFC 7638 JWK thumbprints: the SHA-256 of the key's required members, in lexicographic order,
/// without whitespace, base64url-encoded. What `cnf.jkt` holds (RFC 9449 §6.1).
enum KeyThumbprint {
    /// The thumbprint of the public key whose JWK members are `members`; `nil` for a key type
    /// without one here (only RSA, EC and OKP keys sign proofs) or a required member that is not a string.
    static func of(_ members: [String: JSONValue]) -> String? {
        let required: [String]
        switch members["kty"]?.stringValue {
        case "RSA": required = ["e", "kty", "n"]
        case "EC": required = ["crv", "kty", "x", "y"]
        case "OKP": required = ["crv", "kty", "x"]
        default: return nil
        }
        var canonical: [UInt8] = [UInt8(ascii: "{")]
        canonical.reserveCapacity(512)
        for (position, name) in required.enumerated() {
            guard let value = members[name]?.stringValue else { return nil }
            if position > 0 { canonical.append(UInt8(ascii: ",")) }
            JSONString.append(name, to: &canonical)
            canonical.append(UInt8(ascii: ":"))
            JSONString.append(value, to: &canonical)
        }
        canonical.append(UInt8(ascii: "}"))
        guard let digest = try? LibCrypto.sha256(canonical) else { return nil }
        return Base64URLEncoding.encode(digest)
    }
}
