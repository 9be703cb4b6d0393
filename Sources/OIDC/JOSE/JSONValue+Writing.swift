/// Writing JSON: compact, members sorted by name, so that the same value always gives the same
/// bytes (what is signed, and RFC 7638's thumbprint input).
extension JSONValue {
    /// The value as compact JSON text: no whitespace, object members sorted by their UTF-8 bytes,
    /// strings escaped as RFC 8259 requires (and `/` left as it is), whole numbers without a
    /// fraction.
    public var jsonText: String {
        var output = ""
        write(to: &output)
        return output
    }

    private func write(to output: inout String) {
        switch self {
        case .null: output += "null"
        case .bool(let flag): output += flag ? "true" : "false"
        case .number(let number): output += Self.text(of: number)
        case .string(let text): Self.write(text, to: &output)
        case .array(let elements):
            output += "["
            for (index, element) in elements.enumerated() {
                if index > 0 { output += "," }
                element.write(to: &output)
            }
            output += "]"
        case .object(let members):
            output += "{"
            for (index, name) in members.keys.sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }).enumerated() {
                if index > 0 { output += "," }
                Self.write(name, to: &output)
                output += ":"
                members[name]?.write(to: &output)
            }
            output += "}"
        }
    }

    /// A whole number within ±2^53 as an integer; any other finite number in Swift's shortest form.
    private static func text(of number: Double) -> String {
        if number.rounded() == number, abs(number) < 9_007_199_254_740_992 { return String(Int64(number)) }
        return number.isFinite ? "\(number)" : "null"
    }

    private static func write(_ text: String, to output: inout String) {
        output += "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": output += "\\\""
            case "\\": output += "\\\\"
            case "\n": output += "\\n"
            case "\r": output += "\\r"
            case "\t": output += "\\t"
            case "\u{08}": output += "\\b"
            case "\u{0C}": output += "\\f"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                output += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: output.unicodeScalars.append(scalar)
            }
        }
        output += "\""
    }
}

extension JSONValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByBooleanLiteral {
    /// A string value from a literal.
    public init(stringLiteral value: String) { self = .string(value) }
    /// A number value from an integer literal.
    public init(integerLiteral value: Int) { self = .number(Double(value)) }
    /// A Boolean value from a literal.
    public init(booleanLiteral value: Bool) { self = .bool(value) }
}
