/// A compact JSON object written straight to UTF-8 bytes, its members in the order they are added:
/// for claims made on a hot path (a DPoP proof for every request), where ``JSONValue``'s general,
/// sorted writer does more than is needed. Strings are escaped by ``JSONString``, as
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
        JSONString.append(value, to: &bytes)
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
        bytes.append(UInt8(ascii: "\""))
        bytes.append(UInt8(ascii: ":"))
    }
}
