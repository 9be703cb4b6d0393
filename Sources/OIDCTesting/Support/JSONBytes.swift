internal import Foundation

/// JSON text of the kit's servers' answers (`[String: Any]` objects of strings, numbers, booleans,
/// arrays, objects and `NSNull`), members sorted, `/` not escaped: what
/// `JSONSerialization.data(withJSONObject:options: [.sortedKeys, .withoutEscapingSlashes])` writes,
/// without its per-request cost (on Linux it bridges every dictionary to `NSDictionary`, casts each
/// value dynamically and sorts keys with a locale-aware ICU comparison: 40–70 % of the time of
/// `oidc resource-server` and `oidc provider` under load, by a profile).
///
/// Members are sorted by their names compared ASCII case-insensitively, then byte by byte (for
/// the lower-case names of OAuth and OpenID documents, the order `JSONSerialization` gives; JSON
/// gives member order no meaning). Strings are escaped as RFC 8259 §7 requires (`"`, `\`, control
/// characters), everything else written as UTF-8. A value of another type (or a non-finite number)
/// makes the whole object go through `JSONSerialization` instead, so nothing is ever dropped.
package enum JSONBytes {
    /// The object's JSON text; `{}` when even `JSONSerialization` cannot write it.
    package static func object(_ object: [String: Any]) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(256)
        if write(object, to: &output) { return output }
        let data = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])) ?? Data("{}".utf8)
        return Array(data)
    }

    /// Whether `value` was written (`false`: a type this writer does not know; `output` is then partial).
    private static func write(_ value: Any, to output: inout [UInt8]) -> Bool {
        switch value {
        case let string as String:
            writeString(string, to: &output)
        case let bool as Bool:
            output.append(contentsOf: bool ? Array("true".utf8) : Array("false".utf8))
        case let int as Int:
            output.append(contentsOf: String(int).utf8)
        case let int as Int64:
            output.append(contentsOf: String(int).utf8)
        case let int as Int32:
            output.append(contentsOf: String(int).utf8)
        case let int as UInt64:
            output.append(contentsOf: String(int).utf8)
        case let double as Double:
            guard double.isFinite else { return false }
            if double == double.rounded(), abs(double) < 1e15 {
                output.append(contentsOf: String(Int64(double)).utf8)
            } else {
                output.append(contentsOf: String(double).utf8)
            }
        case let array as [Any]:
            output.append(UInt8(ascii: "["))
            for (index, element) in array.enumerated() {
                if index > 0 { output.append(UInt8(ascii: ",")) }
                guard write(element, to: &output) else { return false }
            }
            output.append(UInt8(ascii: "]"))
        case let object as [String: Any]:
            output.append(UInt8(ascii: "{"))
            for (index, key) in object.keys.sorted(by: precedes).enumerated() {
                if index > 0 { output.append(UInt8(ascii: ",")) }
                writeString(key, to: &output)
                output.append(UInt8(ascii: ":"))
                guard write(object[key]!, to: &output) else { return false }
            }
            output.append(UInt8(ascii: "}"))
        case is NSNull:
            output.append(contentsOf: "null".utf8)
        default:
            return false
        }
        return true
    }

    /// ASCII case-insensitive order, then bytes.
    private static func precedes(_ a: String, _ b: String) -> Bool {
        var left = a.utf8.makeIterator(), right = b.utf8.makeIterator()
        while true {
            switch (left.next(), right.next()) {
            case (nil, nil): return a.utf8.lexicographicallyPrecedes(b.utf8)
            case (nil, _): return true
            case (_, nil): return false
            case let (x?, y?):
                let (lx, ly) = (lowercased(x), lowercased(y))
                if lx != ly { return lx < ly }
            }
        }
    }

    private static func lowercased(_ byte: UInt8) -> UInt8 {
        (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte | 0x20 : byte
    }

    private static let hex = Array("0123456789abcdef".utf8)

    private static func writeString(_ string: String, to output: inout [UInt8]) {
        output.append(UInt8(ascii: "\""))
        for byte in string.utf8 {
            switch byte {
            case UInt8(ascii: "\""): output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
            case UInt8(ascii: "\\"): output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
            case 0x0A: output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
            case 0x0D: output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
            case 0x09: output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
            case 0x08: output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "b")])
            case 0x0C: output.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "f")])
            case ..<0x20:
                output.append(contentsOf: Array("\\u00".utf8))
                output.append(hex[Int(byte >> 4)])
                output.append(hex[Int(byte & 0x0F)])
            default: output.append(byte)
            }
        }
        output.append(UInt8(ascii: "\""))
    }
}
