/// A JSON value as the strict JOSE reader produces it.
public enum JSONValue: Sendable, Equatable {
    /// `null`.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// Always finite: the reader rejects numbers that overflow a `Double`.
    case number(Double)
    /// A string, escapes decoded.
    case string(String)
    /// An array, in order.
    case array([JSONValue])
    /// An object; its member names were unique in the document.
    case object([String: JSONValue])

    /// The string, if this is one; otherwise `nil`.
    public var stringValue: String? {
        if case .string(let value) = self { value } else { nil }
    }

    /// The number, if this is one; otherwise `nil`.
    public var numberValue: Double? {
        if case .number(let value) = self { value } else { nil }
    }

    /// The Boolean, if this is one; otherwise `nil`.
    public var boolValue: Bool? {
        if case .bool(let value) = self { value } else { nil }
    }

    /// The elements, if this is an array; otherwise `nil`.
    public var arrayValue: [JSONValue]? {
        if case .array(let value) = self { value } else { nil }
    }

    /// The members, if this is an object; otherwise `nil`.
    public var objectValue: [String: JSONValue]? {
        if case .object(let value) = self { value } else { nil }
    }
}

/// A JSON object's members in document order, names unique: what the strict reader builds for the
/// small objects of JOSE, where comparing short fingerprints beats hashing every name.
package struct JSONMembers: Sendable {
    /// Below this many members, duplicates are found by comparing fingerprints, then names.
    static let linearSearchLimit = 32

    package var names: [String] = []
    package var values: [JSONValue] = []
    /// ``fingerprint(_:)`` of each name: equal names have equal fingerprints.
    package var fingerprints: [UInt64] = []
    /// Whether any name so far is not ASCII: then a new name, even an ASCII one, may be canonically
    /// equivalent to an earlier one (U+212A KELVIN SIGN and `K`), which byte comparison cannot see.
    private var hasNonASCIIName = false

    init() {
        names.reserveCapacity(16)
        values.reserveCapacity(16)
        fingerprints.reserveCapacity(16)
    }

    /// The UTF-8 length in the top byte and the first seven bytes below it. Names of up to seven
    /// bytes are equal exactly when their fingerprints are; longer ones also need a comparison.
    package static func fingerprint(_ name: String) -> UInt64 {
        var name = name
        return name.withUTF8 { fingerprint(bytes: $0) }
    }

    /// The fingerprint of a name given as its UTF-8 bytes.
    package static func fingerprint(bytes: UnsafeBufferPointer<UInt8>) -> UInt64 {
        // The length saturates at 255, so a long name can never pass for a short one.
        var result = UInt64(min(bytes.count, 255)) << 56
        for position in 0..<min(7, bytes.count) {
            result |= UInt64(bytes[position]) << UInt64(8 * position)
        }
        return result
    }

    /// Whether `name`, whose fingerprint is `fingerprint`, is already a member: the same bytes, or
    /// a canonically equivalent spelling, such as `rôle` in NFC and in NFD, or U+212A KELVIN SIGN and
    /// `K` in either order. Lookups compare `String`s, which are equal when canonically equivalent, so
    /// two such names would make ``subscript(_:)`` and ``dictionary`` disagree on the value: they
    /// count as one. Equivalent names differ in bytes only when one of them is not ASCII, so the
    /// `String` comparison runs only when the new name, or any earlier one, is not ASCII.
    func contains(_ name: String, fingerprint: UInt64) -> Bool {
        for (position, other) in fingerprints.enumerated() where other == fingerprint {
            if fingerprint >> 56 <= 7 || names[position] == name { return true }
        }
        guard hasNonASCIIName || Self.isNonASCII(name) else { return false }
        return names.contains(name)
    }

    private static func isNonASCII(_ name: String) -> Bool { name.utf8.contains { $0 >= 0x80 } }

    mutating func append(_ name: String, fingerprint: UInt64, value: JSONValue) {
        if !hasNonASCIIName, Self.isNonASCII(name) { hasNonASCIIName = true }
        names.append(name)
        fingerprints.append(fingerprint)
        values.append(value)
    }

    package subscript(name: String) -> JSONValue? {
        guard let position = names.firstIndex(of: name) else { return nil }
        return values[position]
    }

    package var dictionary: [String: JSONValue] {
        var result = [String: JSONValue](minimumCapacity: names.count)
        for (name, value) in zip(names, values) { result[name] = value }
        return result
    }
}
