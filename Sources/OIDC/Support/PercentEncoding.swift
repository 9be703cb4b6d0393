/// Percent-encoding for authorization URLs (RFC 3986) and form bodies (WHATWG
/// `application/x-www-form-urlencoded`, as RFC 6749 Appendix B asks), and strict decoding.
package enum PercentEncoding {
    /// Which bytes stay as they are.
    package enum Style: Sendable {
        /// RFC 3986 unreserved characters only; a space is `%20`. For URL query values.
        case uriComponent
        /// ASCII alphanumerics and `*-._`; a space is `+`. For form bodies.
        case form
    }

    private static let hex: [UInt8] = Array("0123456789ABCDEF".utf8)

    private static func isAlphanumeric(_ b: UInt8) -> Bool {
        (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A)
    }

    package static func encode(_ value: String, style: Style) -> String {
        var out = [UInt8]()
        out.reserveCapacity(value.utf8.count)
        for b in value.utf8 {
            let keep: Bool
            switch style {
            case .uriComponent: keep = isAlphanumeric(b) || b == 0x2D || b == 0x2E || b == 0x5F || b == 0x7E
            case .form: keep = isAlphanumeric(b) || b == 0x2A || b == 0x2D || b == 0x2E || b == 0x5F
            }
            if keep {
                out.append(b)
            } else if b == 0x20, style == .form {
                out.append(0x2B)
            } else {
                out.append(0x25)
                out.append(hex[Int(b >> 4)])
                out.append(hex[Int(b & 0x0F)])
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    private static func hexValue(_ b: UInt8) -> UInt8? {
        switch b {
        case 0x30...0x39: b - 0x30
        case 0x41...0x46: b - 0x41 + 10
        case 0x61...0x66: b - 0x61 + 10
        default: nil
        }
    }

    /// Decodes `%XX` escapes (and `+` as a space when `plusIsSpace`); `nil` for a broken escape or
    /// bytes that are not UTF-8.
    package static func decode(_ text: Substring, plusIsSpace: Bool) -> String? {
        var out = [UInt8]()
        out.reserveCapacity(text.utf8.count)
        var iterator = text.utf8.makeIterator()
        while let b = iterator.next() {
            if b == 0x25 {
                guard let h = iterator.next().flatMap(hexValue), let l = iterator.next().flatMap(hexValue) else {
                    return nil
                }
                out.append(h << 4 | l)
            } else if b == 0x2B, plusIsSpace {
                out.append(0x20)
            } else {
                out.append(b)
            }
        }
        return String(validating: out, as: UTF8.self)
    }
}
