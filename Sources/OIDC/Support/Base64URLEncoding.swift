/// Base64url without padding (RFC 4648 §5, RFC 7515 §2), strict on input.
///
/// Decoding accepts only the 64 URL-safe characters, rejects padding, whitespace and any other byte,
/// a length that no encoding can have, and non-zero unused bits in the last character, so every
/// byte string has exactly one accepted encoding.
package enum Base64URLEncoding {
    private static let alphabet: [UInt8] = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    private static let reverse: [UInt8] = {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (index, byte) in alphabet.enumerated() { table[Int(byte)] = UInt8(index) }
        return table
    }()

    /// Encodes bytes as base64url without padding.
    package static func encode<Bytes: Collection>(_ bytes: Bytes) -> String where Bytes.Element == UInt8 {
        if let text = bytes.withContiguousStorageIfAvailable({ encode($0) }) { return text }
        return Array(bytes).withUnsafeBufferPointer { encode($0) }
    }

    /// Encodes bytes as base64url without padding.
    static func encode(_ input: UnsafeBufferPointer<UInt8>) -> String {
        String(unsafeUninitializedCapacity: encodedCount(input.count)) { encode(input, into: $0) }
    }

    /// Appends the base64url encoding of `input` to `output`, with no intermediate string.
    package static func append(_ input: UnsafeBufferPointer<UInt8>, to output: inout [UInt8]) {
        let start = output.count
        output.append(contentsOf: repeatElement(0, count: encodedCount(input.count)))
        output.withUnsafeMutableBufferPointer { out in
            _ = encode(input, into: UnsafeMutableBufferPointer(rebasing: out[start...]))
        }
    }

    private static func encodedCount(_ byteCount: Int) -> Int { (byteCount * 4 + 2) / 3 }

    /// The one encoder: writes `encodedCount(input.count)` characters to `out`, returns that count.
    private static func encode(_ input: UnsafeBufferPointer<UInt8>, into out: UnsafeMutableBufferPointer<UInt8>) -> Int {
        alphabet.withUnsafeBufferPointer { alphabet in
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
    package static func decode(_ text: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        let count = text.count
        guard count % 4 != 1 else { return nil }
        var valid = true
        let output = reverse.withUnsafeBufferPointer { table in
            [UInt8](unsafeUninitializedCapacity: count * 3 / 4) { out, initialized in
                var i = 0
                var o = 0
                while i + 4 <= count {
                    let a = table[Int(text[i])], b = table[Int(text[i + 1])]
                    let c = table[Int(text[i + 2])], d = table[Int(text[i + 3])]
                    guard (a | b | c | d) & 0x80 == 0 else {
                        valid = false
                        break
                    }
                    let v = UInt32(a) << 18 | UInt32(b) << 12 | UInt32(c) << 6 | UInt32(d)
                    out[o] = UInt8(truncatingIfNeeded: v >> 16)
                    out[o + 1] = UInt8(truncatingIfNeeded: v >> 8)
                    out[o + 2] = UInt8(truncatingIfNeeded: v)
                    i += 4
                    o += 3
                }
                if valid, count - i >= 2 {
                    let a = table[Int(text[i])], b = table[Int(text[i + 1])]
                    let c: UInt8 = count - i == 3 ? table[Int(text[i + 2])] : 0
                    let v = UInt32(a) << 18 | UInt32(b) << 12 | UInt32(c) << 6
                    if (a | b | c) & 0x80 != 0 {
                        valid = false
                    } else if count - i == 2 {
                        // 12 bits carry one byte; the last 4 must be zero (canonical form).
                        valid = v & 0x00_FFFF == 0
                        out[o] = UInt8(truncatingIfNeeded: v >> 16)
                        o += 1
                    } else {
                        valid = v & 0x00_00FF == 0
                        out[o] = UInt8(truncatingIfNeeded: v >> 16)
                        out[o + 1] = UInt8(truncatingIfNeeded: v >> 8)
                        o += 2
                    }
                }
                initialized = valid ? o : 0
            }
        }
        return valid ? output : nil
    }

    /// Decodes strict base64url; `nil` for anything that is not the canonical unpadded encoding.
    package static func decode<Chars: Collection>(_ text: Chars) -> [UInt8]? where Chars.Element == UInt8 {
        if let result = text.withContiguousStorageIfAvailable({ decode($0) }) { return result }
        return Array(text).withUnsafeBufferPointer { decode($0) }
    }

    /// Decodes strict base64url from a string; `nil` for anything that is not canonical.
    package static func decode(_ text: String) -> [UInt8]? {
        var text = text
        return text.withUTF8 { decode($0) }
    }
}
