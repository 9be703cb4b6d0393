/// RFC 9449 §4.3 step 9's comparison of a proof's `htu` with the request's URL: both without query
/// and fragment, normalized as RFC 3986 §6.2.2 (case, percent-encoding, dot segments) and §6.2.3
/// (the scheme's default port, an empty path) say. Byte by byte, no Foundation parsing: this runs
/// on every DPoP request.
enum TargetURI {
    /// The normalized form of an absolute `http` or `https` URL, or `nil` for anything else
    /// (another scheme, user information, a non-ASCII byte, a broken percent-encoding, a bad port).
    static func normalized(_ text: String) -> String? {
        var text = text
        return text.withUTF8 { normalized(bytes: $0) }
    }

    private static func normalized(bytes: UnsafeBufferPointer<UInt8>) -> String? {
        guard bytes.count <= 8_192 else { return nil }
        // Scheme.
        guard let colon = bytes.firstIndex(of: UInt8(ascii: ":")) else { return nil }
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count)
        for byte in bytes[..<colon] { output.append(lowercased(byte)) }
        let isHTTPS: Bool
        if output.elementsEqual("https".utf8) { isHTTPS = true } else if output.elementsEqual("http".utf8) { isHTTPS = false } else { return nil }
        guard colon + 2 < bytes.count, bytes[colon + 1] == UInt8(ascii: "/"), bytes[colon + 2] == UInt8(ascii: "/") else { return nil }
        output += "://".utf8
        // Authority: up to the path, query or fragment.
        let authorityStart = colon + 3
        var authorityEnd = authorityStart
        while authorityEnd < bytes.count, !isPathStart(bytes[authorityEnd]) { authorityEnd += 1 }
        let authority = bytes[authorityStart..<authorityEnd]
        guard !authority.isEmpty, !authority.contains(UInt8(ascii: "@")) else { return nil }
        // The port follows the last colon outside an IPv6 literal's brackets.
        var hostEnd = authority.endIndex
        if let lastColon = authority.lastIndex(of: UInt8(ascii: ":")), !(authority[lastColon...].contains(UInt8(ascii: "]"))) {
            hostEnd = lastColon
        }
        let host = authority[authority.startIndex..<hostEnd]
        guard !host.isEmpty else { return nil }
        for byte in host {
            guard byte > 0x20, byte < 0x7F else { return nil }
            output.append(lowercased(byte))
        }
        if hostEnd < authority.endIndex {
            let digits = authority[(hostEnd + 1)...]
            if !digits.isEmpty {
                guard digits.count <= 5, digits.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else { return nil }
                let port = digits.reduce(0) { $0 * 10 + Int($1 - UInt8(ascii: "0")) }
                guard port <= 65_535 else { return nil }
                if port != (isHTTPS ? 443 : 80) {
                    output.append(UInt8(ascii: ":"))
                    output += String(port).utf8
                }
            }
        }
        // Path: up to the query or fragment, percent-encodings normalized, dot segments removed.
        var pathEnd = authorityEnd
        while pathEnd < bytes.count, bytes[pathEnd] != UInt8(ascii: "?"), bytes[pathEnd] != UInt8(ascii: "#") { pathEnd += 1 }
        guard var path = normalizedPath(bytes[authorityEnd..<pathEnd]) else { return nil }
        if path.isEmpty { path = [UInt8(ascii: "/")] }
        output += removingDotSegments(path)
        return String(decoding: output, as: UTF8.self)
    }

    private static func isPathStart(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: "/") || byte == UInt8(ascii: "?") || byte == UInt8(ascii: "#")
    }

    private static func lowercased(_ byte: UInt8) -> UInt8 {
        byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte | 0x20 : byte
    }

    /// An RFC 3986 unreserved byte: a letter, a digit, `-`, `.`, `_` or `~` (also what a host name may hold here).
    static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
            UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
            true
        default: false
        }
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        default: nil
        }
    }

    /// Percent-encodings of unreserved characters decoded, the others' hex digits uppercased
    /// (RFC 3986 §6.2.2.1, §6.2.2.2); a broken encoding, a control or a non-ASCII byte is refused.
    private static func normalizedPath(_ bytes: Slice<UnsafeBufferPointer<UInt8>>) -> [UInt8]? {
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count)
        var index = bytes.startIndex
        while index < bytes.endIndex {
            let byte = bytes[index]
            guard byte > 0x20, byte < 0x7F else { return nil }
            guard byte == UInt8(ascii: "%") else {
                output.append(byte)
                index += 1
                continue
            }
            guard index + 2 < bytes.endIndex,
                let high = hexValue(bytes[index + 1]), let low = hexValue(bytes[index + 2])
            else { return nil }
            let value = high << 4 | low
            if isUnreserved(value) {
                output.append(value)
            } else {
                output += [UInt8(ascii: "%"), hexDigits[Int(high)], hexDigits[Int(low)]]
            }
            index += 3
        }
        return output
    }

    private static let hexDigits: [UInt8] = Array("0123456789ABCDEF".utf8)

    /// RFC 3986 §5.2.4 `remove_dot_segments` on an absolute path.
    private static func removingDotSegments(_ path: [UInt8]) -> [UInt8] {
        // The common case: no segment is `.` or `..`.
        var hasDot = false
        var segmentStart = true
        for byte in path {
            if segmentStart, byte == UInt8(ascii: ".") { hasDot = true; break }
            segmentStart = byte == UInt8(ascii: "/")
        }
        guard hasDot else { return path }
        var segments: [ArraySlice<UInt8>] = []
        let parts = path.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false).dropFirst()
        for (position, part) in parts.enumerated() {
            let isLast = position == parts.count - 1
            if part.elementsEqual(".".utf8) {
                if isLast { segments.append([]) }
            } else if part.elementsEqual("..".utf8) {
                if !segments.isEmpty { segments.removeLast() }
                if isLast { segments.append([]) }
            } else {
                segments.append(part)
            }
        }
        var output: [UInt8] = []
        for segment in segments {
            output.append(UInt8(ascii: "/"))
            output += segment
        }
        return output.isEmpty ? [UInt8(ascii: "/")] : output
    }
}
