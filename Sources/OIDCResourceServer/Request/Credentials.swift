internal import Foundation
internal import OIDC

/// The access token and DPoP proof a request carries, read strictly (RFC 6750 §2, RFC 9449 §4.1,
/// §7.1): at most one `Authorization` field, `scheme SP token68`; at most one `DPoP` field, a
/// compact JWS; no token in the URL.
struct Credentials: Sendable {
    enum Scheme: Sendable {
        case bearer, dpop
    }

    var scheme: Scheme
    var token: String
    /// The `DPoP` header's value, when there is one.
    var proof: String?

    /// The credentials of `request`; `nil` when it carries none this resource takes (no
    /// `Authorization`, or another scheme such as `Basic`), and no `DPoP` header either.
    static func read(_ request: ResourceRequest, maximumTokenLength: Int) throws(Denial) -> Credentials? {
        var authorization: String?
        var proof: String?
        for field in request.headers.fields {
            if Self.equalsIgnoringCase(field.name, "authorization") {
                guard authorization == nil else {
                    throw .invalidRequest(.duplicateAuthorization, "The request has more than one Authorization header.")
                }
                authorization = field.value
            } else if Self.equalsIgnoringCase(field.name, "dpop") {
                guard proof == nil else {
                    throw Denial(.duplicateProof, .invalidRequest, "The request has more than one DPoP header.", scheme: .dpop)
                }
                proof = field.value
            }
        }
        let queryToken = Self.hasQueryToken(request.url)
        guard let authorization else {
            if queryToken {
                throw .invalidRequest(.tokenInQuery, "Access tokens in the URL are not accepted; send the token in the Authorization header.")
            }
            if proof != nil {
                throw Denial(.missingToken, .invalidRequest, "A DPoP proof came without an access token in the Authorization header.", scheme: .dpop)
            }
            return nil
        }
        if queryToken {
            throw .invalidRequest(.tokenInTwoPlaces, "The request carries an access token in the Authorization header and in the URL.")
        }
        let (scheme, token) = try Self.split(authorization)
        guard let scheme else { return nil }
        guard token.utf8.count <= maximumTokenLength else {
            throw .invalidToken(.tokenTooLong, "The access token is longer than the \(maximumTokenLength) bytes this resource accepts.")
        }
        return Credentials(scheme: scheme, token: token, proof: proof)
    }

    /// `scheme SP token68` (RFC 7235 §2.1): the scheme case-insensitively, one or more spaces,
    /// then a token68 (`ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/"`, then `=` padding).
    /// Another scheme gives `nil` as scheme (not ours: no token); anything else is malformed.
    /// Byte by byte over the value's UTF-8, with one copy: the token.
    private static func split(_ value: String) throws(Denial) -> (Scheme?, String) {
        var value = value
        let parsed: (Scheme?, String)? = value.withUTF8 { bytes in
            guard let space = bytes.firstIndex(of: UInt8(ascii: " ")) else {
                // A scheme alone: no credentials under it.
                return !bytes.isEmpty && bytes.allSatisfy(Self.isTokenCharacter) ? (nil, "") : nil
            }
            let schemeBytes = UnsafeBufferPointer(rebasing: bytes[..<space])
            let scheme: Scheme
            if Self.equalsIgnoringCase(schemeBytes, "bearer") {
                scheme = .bearer
            } else if Self.equalsIgnoringCase(schemeBytes, "dpop") {
                scheme = .dpop
            } else {
                return !schemeBytes.isEmpty && schemeBytes.allSatisfy(Self.isTokenCharacter) ? (nil, "") : nil
            }
            var start = space
            while start < bytes.count, bytes[start] == UInt8(ascii: " ") { start += 1 }
            var end = bytes.count
            // Trailing whitespace is optional whitespace around the field value (RFC 9110 §5.5).
            while end > start, bytes[end - 1] == UInt8(ascii: " ") || bytes[end - 1] == 0x09 { end -= 1 }
            let token = UnsafeBufferPointer(rebasing: bytes[start..<end])
            guard !token.isEmpty, Self.isToken68(token) else { return nil }
            return (scheme, String(decoding: token, as: UTF8.self))
        }
        guard let parsed else {
            throw .invalidRequest(.malformedAuthorization, "The Authorization header is not 'scheme token' with a well-formed token.")
        }
        return parsed
    }

    private static func isToken68(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let first = bytes.first, first != UInt8(ascii: "=") else { return false }
        var index = 0
        // The token characters, then only padding: one bit test a byte (this runs over every token),
        // with the masks read once, not a lazy global's check a byte.
        let low = token68Low, high = token68High
        while index < bytes.count, Self.isToken68Character(bytes[index], low: low, high: high) { index += 1 }
        while index < bytes.count, bytes[index] == UInt8(ascii: "=") { index += 1 }
        return index == bytes.count
    }

    /// `ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/"` as bits of two 64-bit masks.
    private static func isToken68Character(_ byte: UInt8, low: UInt64, high: UInt64) -> Bool {
        if byte < 64 { return (low >> UInt64(byte)) & 1 == 1 }
        if byte < 128 { return (high >> UInt64(byte - 64)) & 1 == 1 }
        return false
    }

    private static let token68Low: UInt64 = {
        var mask: UInt64 = 0
        for byte in "0123456789-./+".utf8 { mask |= 1 << UInt64(byte) }
        return mask
    }()

    private static let token68High: UInt64 = {
        var mask: UInt64 = 0
        for byte in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_~".utf8 { mask |= 1 << UInt64(byte - 64) }
        return mask
    }()

    /// ASCII case-insensitive comparison of bytes with a lowercase ASCII `lowercase`.
    static func equalsIgnoringCase(_ bytes: UnsafeBufferPointer<UInt8>, _ lowercase: StaticString) -> Bool {
        guard bytes.count == lowercase.utf8CodeUnitCount else { return false }
        let expected = UnsafeBufferPointer(start: lowercase.utf8Start, count: lowercase.utf8CodeUnitCount)
        for (byte, wanted) in zip(bytes, expected) {
            let folded = byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte | 0x20 : byte
            guard folded == wanted else { return false }
        }
        return true
    }

    /// RFC 9110 §5.6.2 `tchar`.
    private static func isTokenCharacter(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"): true
        default: "!#$%&'*+-.^_`|~".utf8.contains(byte)
        }
    }

    /// Whether the URL's query has an `access_token` parameter (RFC 6750 §2.3).
    private static func hasQueryToken(_ url: URL) -> Bool {
        guard let query = url.query(percentEncoded: true), !query.isEmpty else { return false }
        for pair in query.utf8.split(separator: UInt8(ascii: "&")) {
            let name = pair.prefix { $0 != UInt8(ascii: "=") }
            if name.elementsEqual("access_token".utf8) || name.elementsEqual("access%5Ftoken".utf8) || name.elementsEqual("access%5ftoken".utf8) {
                return true
            }
        }
        return false
    }

    /// ASCII case-insensitive comparison with a lowercase ASCII `lowercase`: no allocation, and a
    /// non-ASCII look-alike (the Kelvin sign for `k`) never matches.
    static func equalsIgnoringCase<S: StringProtocol>(_ text: S, _ lowercase: StaticString) -> Bool {
        let expected = UnsafeBufferPointer(start: lowercase.utf8Start, count: lowercase.utf8CodeUnitCount)
        guard text.utf8.count == expected.count else { return false }
        for (byte, wanted) in zip(text.utf8, expected) {
            let folded = byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte | 0x20 : byte
            guard folded == wanted else { return false }
        }
        return true
    }
}
