#if canImport(Glibc)
internal import Glibc
#elseif canImport(Musl)
internal import Musl
#elseif canImport(Darwin)
internal import Darwin
#endif

/// An IP address written as a literal, parsed the way the system's resolver parses one (`inet_pton`),
/// and for IPv4 only in its one canonical spelling: `127.0.0.09`, `127.1` or `0x7f.0.0.1` are not
/// addresses here, because a resolver that does not read them as addresses sends them to DNS.
package enum IPLiteral: Equatable {
    case v4([UInt8])
    case v6([UInt8])

    /// `nil` when `text` (without brackets) is not exactly an IP literal.
    package init?(_ text: String) {
        if text.contains(":") {
            var address = in6_addr()
            guard inet_pton(AF_INET6, text, &address) == 1 else { return nil }
            self = .v6(withUnsafeBytes(of: &address) { Array($0) })
            return
        }
        var address = in_addr()
        guard inet_pton(AF_INET, text, &address) == 1 else { return nil }
        let bytes = withUnsafeBytes(of: &address) { Array($0) }
        guard bytes.map(String.init).joined(separator: ".") == text else { return nil }
        self = .v4(bytes)
    }

    /// `127.0.0.0/8` or `::1`.
    package var isLoopback: Bool {
        switch self {
        case .v4(let bytes): bytes.first == 127
        case .v6(let bytes): bytes == Array(repeating: 0, count: 15) + [1]
        }
    }

    /// The canonical text: the dotted quad, or `::1` for the IPv6 loopback.
    package var canonical: String? {
        switch self {
        case .v4(let bytes): bytes.map(String.init).joined(separator: ".")
        case .v6: isLoopback ? "::1" : nil
        }
    }
}
