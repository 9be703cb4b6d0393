/// Writing JSON: compact, members sorted by name, so that the same value always gives the same
/// bytes (what is signed, and RFC 7638's thumbprint input).
extension JSONValue {
    /// The value as compact JSON text: no whitespace, object members sorted by their UTF-8 bytes,
    /// strings escaped as RFC 8259 requires (and `/` left as it is, by `JSONString`), whole numbers
    /// without a fraction.
    public var jsonText: String {
        var output: [UInt8] = []
        write(to: &output)
        return String(decoding: output, as: UTF8.self)
    }

    private func write(to output: inout [UInt8]) {
        switch self {
        case .null: output += "null".utf8
        case .bool(let flag): output += (flag ? "true" : "false").utf8
        case .number(let number): output += Self.text(of: number).utf8
        case .string(let text): JSONString.append(text, to: &output)
        case .array(let elements):
            output.append(UInt8(ascii: "["))
            for (index, element) in elements.enumerated() {
                if index > 0 { output.append(UInt8(ascii: ",")) }
                element.write(to: &output)
            }
            output.append(UInt8(ascii: "]"))
        case .object(let members):
            output.append(UInt8(ascii: "{"))
            for (index, name) in members.keys.sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }).enumerated() {
                if index > 0 { output.append(UInt8(ascii: ",")) }
                JSONString.append(name, to: &output)
                output.append(UInt8(ascii: ":"))
                members[name]?.write(to: &output)
            }
            output.append(UInt8(ascii: "}"))
        }
    }

    /// A whole number within ±2^53 as an integer; any other finite number in Swift's shortest form.
    private static func text(of number: Double) -> String {
        if number.rounded() == number, abs(number) < 9_007_199_254_740_992 { return String(Int64(number)) }
        return number.isFinite ? "\(number)" : "null"
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
