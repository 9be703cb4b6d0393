/// A JSON string's text (RFC 8259 §7), written in one place for every writer: ``JSONValue/jsonText``,
/// the DPoP proof's claims, and the `oidc` tool's credential output.
///
/// The quotation mark and the reverse solidus are escaped, `\n`, `\r`, `\t`, `\b` and `\f` by their
/// short forms, every other control character (below U+0020) as `\u00xx` in lowercase; `/` and
/// everything else are left as they are (UTF-8).
package enum JSONString {
    /// `text` as a JSON string, its quotation marks included.
    package static func quoted(_ text: String) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count + 2)
        append(text, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Appends `text` as a JSON string, its quotation marks included, to `bytes`: runs of bytes
    /// that need no escape are copied whole (a DPoP proof writes its claims this way for every request).
    package static func append(_ text: String, to bytes: inout [UInt8]) {
        var text = text
        text.withUTF8 { append(utf8: $0, to: &bytes) }
    }

    /// Appends the UTF-8 `utf8` as a JSON string, its quotation marks included, to `bytes`.
    package static func append(utf8: UnsafeBufferPointer<UInt8>, to bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "\""))
        var runStart = 0
        for index in utf8.indices {
            let byte = utf8[index]
            guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
            if runStart < index { bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart..<index])) }
            runStart = index + 1
            bytes.append(0x5C)
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"): bytes.append(byte)
            case 0x0A: bytes.append(UInt8(ascii: "n"))
            case 0x0D: bytes.append(UInt8(ascii: "r"))
            case 0x09: bytes.append(UInt8(ascii: "t"))
            case 0x08: bytes.append(UInt8(ascii: "b"))
            case 0x0C: bytes.append(UInt8(ascii: "f"))
            default:
                bytes.append(UInt8(ascii: "u")); bytes.append(0x30); bytes.append(0x30)
                bytes.append(hexDigit(byte >> 4)); bytes.append(hexDigit(byte & 15))
            }
        }
        if runStart < utf8.count { bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart...])) }
        bytes.append(UInt8(ascii: "\""))
    }

    /// `0`–`9`, `a`–`f`.
    private static func hexDigit(_ value: UInt8) -> UInt8 { value < 10 ? 0x30 + value : 0x61 + value - 10 }
}
