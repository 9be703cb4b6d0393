/// One challenge of a `WWW-Authenticate` field (RFC 9110 §11.6.1): a scheme and its parameters,
/// such as `DPoP error="use_dpop_nonce", algs="ES256 PS256"`.
struct AuthenticationChallenge: Equatable {
    /// The scheme as sent (`Bearer`, `DPoP`); compare case-insensitively.
    var scheme: String
    /// The parameters, names lowercased, quoted strings unquoted. A token68 is left out.
    var parameters: [String: String]

    /// The challenges of one field value, in order; malformed parts end the parse (what was read
    /// before is kept). At most 16 challenges and 4 KiB are read.
    static func parse(_ field: String) -> [AuthenticationChallenge] {
        var scanner = Scanner(Array(field.utf8.prefix(4096)))
        var challenges: [AuthenticationChallenge] = []
        while challenges.count < 16 {
            scanner.skip { $0 == 0x20 || $0 == 0x09 || $0 == 0x2C }
            guard let scheme = scanner.token() else { break }
            var challenge = AuthenticationChallenge(scheme: scheme, parameters: [:])
            // Parameters: name = value, separated by commas; a name not followed by "=" starts the next challenge.
            while true {
                let mark = scanner.position
                scanner.skip { $0 == 0x20 || $0 == 0x09 || $0 == 0x2C }
                guard let name = scanner.token() else { scanner.position = mark; break }
                scanner.skip { $0 == 0x20 || $0 == 0x09 }
                guard scanner.take(0x3D) else { scanner.position = mark; break }  // "="
                if scanner.peek == 0x3D {  // token68 padding, such as `Basic abc==`
                    scanner.skip { $0 == 0x3D }
                    continue
                }
                scanner.skip { $0 == 0x20 || $0 == 0x09 }
                guard let value = scanner.quotedString() ?? scanner.token() else { return challenges + [challenge] }
                challenge.parameters[name.lowercased()] = value
            }
            challenges.append(challenge)
            if scanner.atEnd { break }
        }
        return challenges
    }

    private struct Scanner {
        let bytes: [UInt8]
        var position = 0

        init(_ bytes: [UInt8]) { self.bytes = bytes }

        var atEnd: Bool { position >= bytes.count }
        var peek: UInt8? { atEnd ? nil : bytes[position] }

        mutating func skip(while predicate: (UInt8) -> Bool) {
            while let byte = peek, predicate(byte) { position += 1 }
        }

        mutating func take(_ byte: UInt8) -> Bool {
            guard peek == byte else { return false }
            position += 1
            return true
        }

        /// RFC 9110 `token` (tchar), plus "/" for token68 values.
        mutating func token() -> String? {
            let start = position
            skip { Self.isTokenCharacter($0) }
            return position > start ? String(decoding: bytes[start..<position], as: UTF8.self) : nil
        }

        mutating func quotedString() -> String? {
            guard take(0x22) else { return nil }
            var value: [UInt8] = []
            while let byte = peek {
                position += 1
                switch byte {
                case 0x22: return String(decoding: value, as: UTF8.self)
                case 0x5C:
                    guard let escaped = peek else { return nil }
                    position += 1
                    value.append(escaped)
                default: value.append(byte)
                }
            }
            return nil
        }

        static func isTokenCharacter(_ byte: UInt8) -> Bool {
            switch byte {
            case 0x30...0x39, 0x41...0x5A, 0x61...0x7A: true
            case 0x21, 0x23, 0x24, 0x25, 0x26, 0x27, 0x2A, 0x2B, 0x2D, 0x2E, 0x5E, 0x5F, 0x60, 0x7C, 0x7E, 0x2F: true
            default: false
            }
        }
    }
}
