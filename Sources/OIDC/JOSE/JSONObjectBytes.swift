/// A compact JSON object written straight to UTF-8 bytes, its members in the order they are added:
/// for claims made on a hot path (a DPoP proof for every request), where ``JSONValue``'s general,
/// sorted writer does more than is needed. Strings are escaped as RFC 8259 requires, the same way
/// ``JSONValue/jsonText`` escapes them.
struct JSONObjectBytes {
    private(set) var bytes: [UInt8]
    private var empty = true

    init(capacity: Int = 256) {
        bytes = []
        bytes.reserveCapacity(capacity)
        bytes.append(UInt8(ascii: "{"))
    }

    /// Adds `"name":"value"`.
    mutating func add(_ name: StaticString, _ value: String) {
        startMember(name)
        bytes.append(UInt8(ascii: "\""))
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "\""): bytes.append(contentsOf: [0x5C, 0x22])
            case UInt8(ascii: "\\"): bytes.append(contentsOf: [0x5C, 0x5C])
            case 0x0A: bytes.append(contentsOf: [0x5C, UInt8(ascii: "n")])
            case 0x0D: bytes.append(contentsOf: [0x5C, UInt8(ascii: "r")])
            case 0x09: bytes.append(contentsOf: [0x5C, UInt8(ascii: "t")])
            case 0x08: bytes.append(contentsOf: [0x5C, UInt8(ascii: "b")])
            case 0x0C: bytes.append(contentsOf: [0x5C, UInt8(ascii: "f")])
            case 0..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                bytes.append(contentsOf: [0x5C, UInt8(ascii: "u"), 0x30, 0x30, hex[Int(byte >> 4)], hex[Int(byte & 15)]])
            default: bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }

    /// Adds `"name":number`, a whole number.
    mutating func add(_ name: StaticString, _ value: Int64) {
        startMember(name)
        bytes.append(contentsOf: String(value).utf8)
    }

    /// The object's text, closed.
    consuming func closed() -> [UInt8] {
        bytes.append(UInt8(ascii: "}"))
        return bytes
    }

    private mutating func startMember(_ name: StaticString) {
        if !empty { bytes.append(UInt8(ascii: ",")) }
        empty = false
        bytes.append(UInt8(ascii: "\""))
        name.withUTF8Buffer { bytes.append(contentsOf: $0) }
        bytes.append(contentsOf: [UInt8(ascii: "\""), UInt8(ascii: ":")])
    }
}
