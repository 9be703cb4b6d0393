/// JWS carries ECDSA signatures as the fixed-width concatenation `r‖s` (RFC 7518 §3.4); OpenSSL
/// wants DER `SEQUENCE { INTEGER r, INTEGER s }`.
enum ECDSASignature {
    /// DER for a raw `r‖s` of exactly `2 * coordinateSize` bytes.
    static func der(fromRaw raw: UnsafeRawBufferPointer, coordinateSize: Int) -> [UInt8]? {
        guard raw.count == 2 * coordinateSize else { return nil }
        func integer(_ bytes: Slice<UnsafeRawBufferPointer>) -> [UInt8] {
            var value = Array(bytes.drop { $0 == 0 })
            if value.isEmpty { value = [0] }
            if value[0] & 0x80 != 0 { value.insert(0, at: 0) }
            return [0x02] + length(value.count) + value
        }
        let body = integer(raw[0..<coordinateSize]) + integer(raw[coordinateSize...])
        return [0x30] + length(body.count) + body
    }

    /// Raw `r‖s` of `2 * coordinateSize` bytes from a DER signature; `nil` if it is not one.
    static func raw(fromDER der: [UInt8], coordinateSize: Int) -> [UInt8]? {
        var index = 0
        func readLength() -> Int? {
            guard index < der.count else { return nil }
            let first = der[index]
            index += 1
            if first < 0x80 { return Int(first) }
            guard first == 0x81, index < der.count else { return nil }
            defer { index += 1 }
            return Int(der[index])
        }
        func readInteger() -> [UInt8]? {
            guard index < der.count, der[index] == 0x02 else { return nil }
            index += 1
            guard let count = readLength(), count > 0, index + count <= der.count else { return nil }
            var value = Array(der[index..<(index + count)].drop { $0 == 0 })
            index += count
            guard value.count <= coordinateSize else { return nil }
            value = [UInt8](repeating: 0, count: coordinateSize - value.count) + value
            return value
        }
        guard der.first == 0x30 else { return nil }
        index = 1
        guard let total = readLength(), index + total == der.count, let r = readInteger(), let s = readInteger(),
            index == der.count
        else { return nil }
        return r + s
    }

    private static func length(_ count: Int) -> [UInt8] {
        count < 0x80 ? [UInt8(count)] : [0x81, UInt8(count)]  // at most 2 * (66 + 3) + 2 bytes for P-521
    }
}
