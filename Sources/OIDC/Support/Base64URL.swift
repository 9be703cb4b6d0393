/// Base64url without padding (RFC 4648 §5, RFC 7515 §2), strict on input.
///
/// Decoding accepts only the 64 URL-safe characters, rejects padding, whitespace and any other byte,
/// a length that no encoding can have, and non-zero unused bits in the last character, so every
/// byte string has exactly one accepted encoding.
public enum Base64URL {
    private static let alphabet: [UInt8] = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    private static let reverse: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (index, byte) in alphabet.enumerated() { table[Int(byte)] = UInt8(index) }
        return table
    }()

    /// Encodes bytes as base64url without padding.
    public static func encode<Bytes: Collection>(_ bytes: Bytes) -> String where Bytes.Element == UInt8 {
        let input = Array(bytes)
        let outputCount = (input.count * 4 + 2) / 3
        return String(unsafeUninitializedCapacity: outputCount) { out in
            var o = 0
            var i = 0
            while i + 3 <= input.count {
                let v = UInt32(input[i]) << 16 | UInt32(input[i + 1]) << 8 | UInt32(input[i + 2])
                out[o] = alphabet[Int(v >> 18)]
                out[o + 1] = alphabet[Int(v >> 12 & 63)]
                out[o + 2] = alphabet[Int(v >> 6 & 63)]
                out[o + 3] = alphabet[Int(v & 63)]
                o += 4
                i += 3
            }
            switch input.count - i {
            case 1:
                let v = UInt32(input[i]) << 16
                out[o] = alphabet[Int(v >> 18)]
                out[o + 1] = alphabet[Int(v >> 12 & 63)]
                o += 2
            case 2:
                let v = UInt32(input[i]) << 16 | UInt32(input[i + 1]) << 8
                out[o] = alphabet[Int(v >> 18)]
                out[o + 1] = alphabet[Int(v >> 12 & 63)]
                out[o + 2] = alphabet[Int(v >> 6 & 63)]
                o += 3
            default:
                break
            }
            return o
        }
    }

    /// Decodes strict base64url; `nil` for anything that is not the canonical unpadded encoding.
    public static func decode<Chars: Collection>(_ text: Chars) -> [UInt8]? where Chars.Element == UInt8 {
        let count = text.count
        guard count % 4 != 1 else { return nil }
        var output = [UInt8]()
        output.reserveCapacity(count * 3 / 4)
        var accumulator: UInt32 = 0
        var bits = 0
        for char in text {
            let value = reverse[Int(char)]
            guard value != 0xFF else { return nil }
            accumulator = accumulator << 6 | UInt32(value)
            bits += 6
            if bits >= 8 {
                bits -= 8
                output.append(UInt8(truncatingIfNeeded: accumulator >> UInt32(bits)))
                accumulator &= (1 << UInt32(bits)) - 1
            }
        }
        guard accumulator == 0 else { return nil }  // non-canonical trailing bits
        return output
    }

    /// Decodes strict base64url from a string; `nil` for anything that is not canonical.
    public static func decode(_ text: String) -> [UInt8]? { decode(text.utf8) }
}
