internal import Foundation
internal import NIOCore

#if canImport(Glibc)
internal import Glibc
#endif

/// Why a server socket of the package (the loopback listener's, the test provider's) could not be
/// bound, said as the user can act on it: a taken port, an address this machine lacks, or a port
/// below 1024, which an ordinary user may not bind.
package enum BindFailure {
    /// `portInUse` for a taken port; `invalidArgument` naming `endpoint` (`host:port`) and the
    /// system's reason otherwise.
    package static func error(_ error: any Error, endpoint: String) -> OIDCError {
        let context = ["endpoint": endpoint]
        guard let code = (error as? IOError)?.errnoCode else {
            return OIDCError(.invalidArgument, "\(endpoint) could not be bound (\(error)).", context: context)
        }
        let reason = String(cString: strerror(code))
        switch code {
        case EADDRINUSE:
            return OIDCError(
                .portInUse,
                "\(endpoint) is in use by another program; choose another port or stop the program that holds it.",
                context: context
            )
        case EADDRNOTAVAIL, EAFNOSUPPORT:
            return OIDCError(
                .invalidArgument,
                "\(endpoint) cannot be bound on this machine (\(reason)); listen on another loopback address, such as 127.0.0.1.",
                context: context
            )
        case EACCES, EPERM:
            return OIDCError(
                .invalidArgument,
                "\(endpoint) may not be bound by this user (\(reason)); ports below \(firstUnprivilegedPort) are privileged, so use a higher one or 0.",
                context: context
            )
        default:
            return OIDCError(.invalidArgument, "\(endpoint) could not be bound (\(reason)).", context: context)
        }
    }

    /// The first port an ordinary user may bind: Linux's `net.ipv4.ip_unprivileged_port_start`
    /// (1024 unless changed; Docker sets 0), 1024 elsewhere.
    package static var firstUnprivilegedPort: Int {
        guard let text = try? String(contentsOfFile: "/proc/sys/net/ipv4/ip_unprivileged_port_start", encoding: .utf8),
            let port = Int(text.trimmingCharacters(in: .whitespacesAndNewlines))
        else { return 1024 }
        return port
    }
}
