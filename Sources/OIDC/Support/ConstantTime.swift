/// Comparisons whose running time does not depend on where two values differ.
package enum ConstantTime {
    /// Whether two strings have the same UTF-8 bytes. The time depends on the lengths only.
    package static func equals(_ lhs: String, _ rhs: String) -> Bool {
        var a = lhs
        var b = rhs
        return a.withUTF8 { x in
            b.withUTF8 { y in
                var difference = UInt8(truncatingIfNeeded: x.count ^ y.count) | (x.count == y.count ? 0 : 1)
                let n = Swift.min(x.count, y.count)
                for i in 0..<n { difference |= x[i] ^ y[i] }
                return difference == 0
            }
        }
    }
}
