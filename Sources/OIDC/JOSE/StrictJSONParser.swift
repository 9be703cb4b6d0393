/// A strict, allocation-light JSON reader for the small objects of JOSE: headers, claims, JWKs.
///
/// Unlike `JSONSerialization`/`JSONDecoder` it rejects duplicate member names (RFC 7515 §5.2 and
/// RFC 7519 §4 require it; Foundation silently keeps the last), nesting deeper than a bound,
/// numbers that are not finite `Double`s, invalid UTF-8, unpaired surrogates, unescaped control
/// characters and anything after the value (RFC 8259).
package enum StrictJSONParser {
    /// Why a document was refused.
    package struct ParseError: Error, Sendable, Equatable, CustomStringConvertible {
        /// What is wrong, such as `duplicate member name 'aud'` or `number out of range`.
        package let reason: String
        /// Byte offset of the problem.
        package let offset: Int
        /// ``reason`` and ``offset``: `duplicate member name 'aud' at byte 42`.
        package var description: String { "\(reason) at byte \(offset)" }
    }

    /// The default nesting bound; JOSE headers and ID-token claims need far less.
    package static let defaultMaximumDepth = 32

    /// Parses one JSON text.
    package static func parse(_ bytes: [UInt8], maximumDepth: Int = defaultMaximumDepth) throws(ParseError) -> JSONValue {
        try bytes.withUnsafeBufferPointer { buffer throws(ParseError) in
            var reader = Reader(buffer: buffer, maximumDepth: maximumDepth)
            return try reader.document()
        }
    }

    /// Parses one JSON text that must be an object.
    package static func parseObject(_ bytes: [UInt8], maximumDepth: Int = defaultMaximumDepth) throws(ParseError) -> [String: JSONValue] {
        guard case .object(let object) = try parse(bytes, maximumDepth: maximumDepth) else {
            throw ParseError(reason: "expected a JSON object", offset: 0)
        }
        return object
    }

    /// Parses one JSON text that must be an object, keeping its members in order (no hashing).
    package static func parseMembers(_ bytes: [UInt8], maximumDepth: Int = defaultMaximumDepth) throws(ParseError) -> JSONMembers {
        try bytes.withUnsafeBufferPointer { buffer throws(ParseError) in
            var reader = Reader(buffer: buffer, maximumDepth: maximumDepth)
            reader.skipWhitespace()
            guard reader.index < buffer.count, buffer[reader.index] == UInt8(ascii: "{") else {
                throw ParseError(reason: "expected a JSON object", offset: reader.index)
            }
            let members = try reader.members()
            reader.skipWhitespace()
            guard reader.index == buffer.count else { throw reader.fail("unexpected content after the JSON value") }
            return members
        }
    }

    private struct Reader {
        let buffer: UnsafeBufferPointer<UInt8>
        let maximumDepth: Int
        var index = 0
        var depth = 0
        /// Whether the last string read had no escapes (its bytes are exactly its UTF-8).
        var lastStringWasVerbatim = false

        init(buffer: UnsafeBufferPointer<UInt8>, maximumDepth: Int) {
            self.buffer = buffer
            self.maximumDepth = maximumDepth
        }

        func fail(_ reason: String) -> ParseError { ParseError(reason: reason, offset: index) }

        mutating func document() throws(ParseError) -> JSONValue {
            skipWhitespace()
            let value = try self.value()
            skipWhitespace()
            guard index == buffer.count else { throw fail("unexpected content after the JSON value") }
            return value
        }

        mutating func skipWhitespace() {
            while index < buffer.count {
                switch buffer[index] {
                case 0x20, 0x09, 0x0A, 0x0D: index += 1
                default: return
                }
            }
        }

        mutating func value() throws(ParseError) -> JSONValue {
            guard index < buffer.count else { throw fail("unexpected end of input") }
            switch buffer[index] {
            case UInt8(ascii: "{"): return .object(try object())
            case UInt8(ascii: "["): return .array(try array())
            case UInt8(ascii: "\""): return .string(try string())
            case UInt8(ascii: "t"): try literal("true"); return .bool(true)
            case UInt8(ascii: "f"): try literal("false"); return .bool(false)
            case UInt8(ascii: "n"): try literal("null"); return .null
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try number())
            default: throw fail("unexpected character")
            }
        }

        mutating func literal(_ word: StaticString) throws(ParseError) {
            let count = word.utf8CodeUnitCount
            guard buffer.count - index >= count else { throw fail("unexpected end of input") }
            for i in 0..<count where buffer[index + i] != word.utf8Start[i] { throw fail("invalid literal") }
            index += count
        }

        mutating func enter() throws(ParseError) {
            depth += 1
            guard depth <= maximumDepth else { throw fail("nesting deeper than \(maximumDepth)") }
        }

        mutating func object() throws(ParseError) -> [String: JSONValue] {
            try members().dictionary
        }

        /// An object's members in document order, duplicates refused. Small objects (all of JOSE's)
        /// are checked by comparing names, which costs less than hashing every name.
        mutating func members() throws(ParseError) -> JSONMembers {
            try enter()
            defer { depth -= 1 }
            index += 1
            var result = JSONMembers()
            var seen: Set<String>?
            skipWhitespace()
            if index < buffer.count, buffer[index] == UInt8(ascii: "}") {
                index += 1
                return result
            }
            while true {
                skipWhitespace()
                guard index < buffer.count, buffer[index] == UInt8(ascii: "\"") else { throw fail("expected a member name") }
                let nameOffset = index
                let name = try string()
                // The name's bytes as written, when it had no escapes: fingerprint them directly.
                let fingerprint = lastStringWasVerbatim
                    ? JSONMembers.fingerprint(bytes: UnsafeBufferPointer(rebasing: buffer[(nameOffset + 1)..<(index - 1)]))
                    : JSONMembers.fingerprint(name)
                skipWhitespace()
                guard index < buffer.count, buffer[index] == UInt8(ascii: ":") else { throw fail("expected ':'") }
                index += 1
                skipWhitespace()
                let member = try value()
                let duplicate: Bool
                if result.names.count < JSONMembers.linearSearchLimit {
                    duplicate = result.contains(name, fingerprint: fingerprint)
                } else {
                    if seen == nil { seen = Set(result.names) }
                    duplicate = !seen!.insert(name).inserted
                }
                guard !duplicate else {
                    throw ParseError(reason: "duplicate member name '\(UntrustedText.sanitized(name, limit: 64))'", offset: nameOffset)
                }
                result.append(name, fingerprint: fingerprint, value: member)
                skipWhitespace()
                guard index < buffer.count else { throw fail("unexpected end of input") }
                switch buffer[index] {
                case UInt8(ascii: ","): index += 1
                case UInt8(ascii: "}"): index += 1; return result
                default: throw fail("expected ',' or '}'")
                }
            }
        }

        mutating func array() throws(ParseError) -> [JSONValue] {
            try enter()
            defer { depth -= 1 }
            index += 1
            var result: [JSONValue] = []
            skipWhitespace()
            if index < buffer.count, buffer[index] == UInt8(ascii: "]") {
                index += 1
                return result
            }
            while true {
                skipWhitespace()
                result.append(try value())
                skipWhitespace()
                guard index < buffer.count else { throw fail("unexpected end of input") }
                switch buffer[index] {
                case UInt8(ascii: ","): index += 1
                case UInt8(ascii: "]"): index += 1; return result
                default: throw fail("expected ',' or ']'")
                }
            }
        }

        mutating func string() throws(ParseError) -> String {
            index += 1  // opening quote
            let start = index
            var ascii = true
            // Fast path: no escapes.
            while index < buffer.count {
                let b = buffer[index]
                if b == UInt8(ascii: "\"") {
                    let slice = UnsafeBufferPointer(rebasing: buffer[start..<index])
                    index += 1
                    lastStringWasVerbatim = true
                    // ASCII needs no validation; String(decoding:) is the specialized fast path.
                    if ascii { return String(decoding: slice, as: UTF8.self) }
                    guard let text = String(validating: slice, as: UTF8.self) else { throw fail("invalid UTF-8 in a string") }
                    return text
                }
                if b == UInt8(ascii: "\\") { break }
                if b < 0x20 { throw fail("unescaped control character in a string") }
                if b >= 0x80 { ascii = false }
                index += 1
            }
            lastStringWasVerbatim = false
            var bytes = Array(UnsafeBufferPointer(rebasing: buffer[start..<index]))
            while index < buffer.count {
                let b = buffer[index]
                switch b {
                case UInt8(ascii: "\""):
                    index += 1
                    guard let text = String(validating: bytes, as: UTF8.self) else { throw fail("invalid UTF-8 in a string") }
                    return text
                case UInt8(ascii: "\\"):
                    index += 1
                    guard index < buffer.count else { throw fail("unexpected end of input") }
                    let escape = buffer[index]
                    index += 1
                    switch escape {
                    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): bytes.append(escape)
                    case UInt8(ascii: "b"): bytes.append(0x08)
                    case UInt8(ascii: "f"): bytes.append(0x0C)
                    case UInt8(ascii: "n"): bytes.append(0x0A)
                    case UInt8(ascii: "r"): bytes.append(0x0D)
                    case UInt8(ascii: "t"): bytes.append(0x09)
                    case UInt8(ascii: "u"): try unicodeEscape(into: &bytes)
                    default: throw fail("invalid escape")
                    }
                default:
                    if b < 0x20 { throw fail("unescaped control character in a string") }
                    bytes.append(b)
                    index += 1
                }
            }
            throw fail("unterminated string")
        }

        mutating func hex4() throws(ParseError) -> UInt32 {
            guard buffer.count - index >= 4 else { throw fail("truncated \\u escape") }
            var value: UInt32 = 0
            for _ in 0..<4 {
                let c = buffer[index]
                let digit: UInt32
                switch c {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(c - UInt8(ascii: "0"))
                case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(c - UInt8(ascii: "a") + 10)
                case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(c - UInt8(ascii: "A") + 10)
                default: throw fail("invalid \\u escape")
                }
                value = value << 4 | digit
                index += 1
            }
            return value
        }

        mutating func unicodeEscape(into bytes: inout [UInt8]) throws(ParseError) {
            var scalar = try hex4()
            if (0xD800...0xDBFF).contains(scalar) {
                guard buffer.count - index >= 6, buffer[index] == UInt8(ascii: "\\"), buffer[index + 1] == UInt8(ascii: "u") else {
                    throw fail("unpaired surrogate")
                }
                index += 2
                let low = try hex4()
                guard (0xDC00...0xDFFF).contains(low) else { throw fail("unpaired surrogate") }
                scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
            } else if (0xDC00...0xDFFF).contains(scalar) {
                throw fail("unpaired surrogate")
            }
            guard let unicode = Unicode.Scalar(scalar) else { throw fail("invalid \\u escape") }
            bytes.append(contentsOf: UTF8.encode(unicode)!)
        }

        mutating func number() throws(ParseError) -> Double {
            let start = index
            var negative = false
            if buffer[index] == UInt8(ascii: "-") {
                negative = true
                index += 1
            }
            func isDigit(_ i: Int) -> Bool { i < buffer.count && buffer[i] >= 0x30 && buffer[i] <= 0x39 }
            guard isDigit(index) else { throw fail("invalid number") }
            var integer: UInt64 = 0
            var digits = 0
            if buffer[index] == UInt8(ascii: "0") {
                index += 1
                guard !isDigit(index) else { throw fail("leading zero in a number") }
            } else {
                while isDigit(index) {
                    if digits < 18 { integer = integer * 10 + UInt64(buffer[index] - 0x30) }
                    digits += 1
                    index += 1
                }
            }
            var simple = digits <= 15
            if index < buffer.count, buffer[index] == UInt8(ascii: ".") {
                simple = false
                index += 1
                guard isDigit(index) else { throw fail("invalid fraction") }
                while isDigit(index) { index += 1 }
            }
            if index < buffer.count, buffer[index] == UInt8(ascii: "e") || buffer[index] == UInt8(ascii: "E") {
                simple = false
                index += 1
                if index < buffer.count, buffer[index] == UInt8(ascii: "+") || buffer[index] == UInt8(ascii: "-") { index += 1 }
                guard isDigit(index) else { throw fail("invalid exponent") }
                while isDigit(index) { index += 1 }
            }
            if simple {
                let value = Double(integer)
                return negative ? -value : value
            }
            let text = String(decoding: UnsafeBufferPointer(rebasing: buffer[start..<index]), as: UTF8.self)
            guard let value = Double(text), value.isFinite else {
                throw ParseError(reason: "number out of range", offset: start)
            }
            return value
        }
    }
}
