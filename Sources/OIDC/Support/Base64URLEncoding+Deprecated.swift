/// Base64url without padding (RFC 4648 §5, RFC 7515 §2), strict on input: the library's own
/// plumbing, public by mistake.
@available(*, deprecated, message: "Base64URL is internal plumbing and will be removed; use Foundation's Data(base64Encoded:) after mapping '-' and '_' to '+' and '/', or your own base64url coder")
public enum Base64URL {
    /// Encodes bytes as base64url without padding.
    public static func encode<Bytes: Collection>(_ bytes: Bytes) -> String where Bytes.Element == UInt8 {
        Base64URLEncoding.encode(bytes)
    }

    /// Decodes unpadded base64url; `nil` for anything that is not one.
    public static func decode(_ text: UnsafeBufferPointer<UInt8>) -> [UInt8]? { Base64URLEncoding.decode(text) }

    /// Decodes unpadded base64url; `nil` for anything that is not one.
    public static func decode<Chars: Collection>(_ text: Chars) -> [UInt8]? where Chars.Element == UInt8 {
        Base64URLEncoding.decode(text)
    }

    /// Decodes unpadded base64url; `nil` for anything that is not one.
    public static func decode(_ text: String) -> [UInt8]? { Base64URLEncoding.decode(text) }
}
