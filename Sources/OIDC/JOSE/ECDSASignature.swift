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

    private static func length(_ count: Int) -> [UInt8] {
        count < 0x80 ? [UInt8(count)] : [0x81, UInt8(count)]  // at most 2 * (66 + 3) + 2 bytes for P-521
    }
}
