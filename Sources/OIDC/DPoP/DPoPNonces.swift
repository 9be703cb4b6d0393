public import Foundation
internal import Synchronization

/// The latest `DPoP-Nonce` of each server (RFC 9449 §8, §9), keyed by origin (scheme, host, port):
/// read from every response, successes too, since servers rotate their nonces at any time.
///
/// Shared by every copy of the ``RelyingParty`` or ``AuthenticatedSession`` that made it; thread-safe.
/// Holds at most 64 origins (the oldest is forgotten first). Nonces are not secrets.
public final class DPoPNonces: Sendable {
    private struct Entries {
        var nonces: [String: String] = [:]
        var order: [String] = []
    }

    private let entries = Mutex(Entries())
    static let capacity = 64

    /// An empty cache.
    public init() {}

    /// The latest nonce of `url`'s origin, if its server gave one.
    public func nonce(for url: URL) -> String? {
        guard let origin = Self.origin(of: url) else { return nil }
        return entries.withLock { $0.nonces[origin] }
    }

    /// Keeps the `DPoP-Nonce` of `response` (to a request to `url`), when it carries a valid one.
    /// Returns whether it changed the nonce kept for that origin.
    @discardableResult
    package func record(_ response: HTTPResponse, from url: URL) -> Bool {
        guard let nonce = response.headers["DPoP-Nonce"], Self.isValid(nonce), let origin = Self.origin(of: url) else { return false }
        return entries.withLock { entries in
            if entries.nonces[origin] == nonce { return false }
            if entries.nonces[origin] == nil {
                if entries.order.count >= Self.capacity { entries.nonces[entries.order.removeFirst()] = nil }
                entries.order.append(origin)
            }
            entries.nonces[origin] = nonce
            return true
        }
    }

    /// Every kept nonce by origin (`scheme://host:port`), the least recently changed first: for a
    /// program that keeps them between processes (`oidc request`, then `oidc proof`).
    package var latest: [(origin: String, nonce: String)] {
        entries.withLock { entries in entries.order.compactMap { origin in entries.nonces[origin].map { (origin, $0) } } }
    }

    /// Keeps `nonce` for `origin` as ``latest`` gave it (a valid nonce, an origin of printable
    /// ASCII), as if it had just come: it becomes the most recently changed.
    package func remember(_ nonce: String, forOrigin origin: String) {
        guard Self.isValid(nonce), !origin.isEmpty, origin.utf8.count <= 300, origin.utf8.allSatisfy({ (0x21...0x7E).contains($0) }) else { return }
        entries.withLock { entries in
            if entries.nonces[origin] != nil { entries.order.removeAll { $0 == origin } }
            if entries.order.count >= Self.capacity { entries.nonces[entries.order.removeFirst()] = nil }
            entries.order.append(origin)
            entries.nonces[origin] = nonce
        }
    }

    /// RFC 9449 §8.1: `nonce = 1*NQCHAR` (printable ASCII but `"` and `\`); at most 512 characters here.
    static func isValid(_ nonce: String) -> Bool {
        !nonce.isEmpty && nonce.utf8.count <= 512
            && nonce.utf8.allSatisfy { $0 == 0x21 || (0x23...0x5B).contains($0) || (0x5D...0x7E).contains($0) }
    }

    package static func origin(of url: URL) -> String? {
        guard let scheme = url.scheme?.lowercased(), let host = url.host?.lowercased() else { return nil }
        let port = url.port ?? (scheme == "https" ? 443 : 80)
        return "\(scheme)://\(host):\(port)"
    }
}
