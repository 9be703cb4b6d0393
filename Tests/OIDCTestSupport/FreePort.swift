import OIDC

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A TCP port of 127.0.0.1 that was free a moment ago: bound to port 0, read back, and released,
/// for a peer that must be told its port before it starts (a registered redirect URI, a listener
/// of another process). Another program may take it in between; a test that can bind port 0 itself
/// should.
public func freePort() throws -> Int {
    #if canImport(Glibc)
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    #else
    let fd = socket(AF_INET, SOCK_STREAM, 0)
    #endif
    guard fd >= 0 else { throw OIDCError(.invalidArgument, "no free port") }
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) { pointer in
        pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
    }
    guard bound else { throw OIDCError(.invalidArgument, "no free port") }
    return Int(UInt16(bigEndian: address.sin_port))
}
