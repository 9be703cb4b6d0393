public import Foundation
public import OIDC

/// Server-provided DPoP nonces (RFC 9449 §8): every proof must carry a nonce this server issued
/// recently, which bounds how long a proof made in advance (by an attacker holding the key for a
/// while) can be used.
///
/// The nonces are stateless: a nonce is a time window's number and an HMAC-SHA-256 of it under a
/// secret, so checking one needs no table and no lock, and instances that share the secret
/// accept each other's nonces. A new window (a new nonce) starts every ``lifetime`` seconds; the
/// nonce of the current window and of the one before are accepted. A proof with the previous
/// window's nonce is accepted and the answer carries the current one in `DPoP-Nonce` (rotation);
/// a proof without a nonce, or with an older or forged one, is refused with `use_dpop_nonce` and
/// the current nonce.
public struct DPoPServerNonces: Sendable {
    /// How long each nonce is the current one, in seconds (5 minutes by default); it is accepted
    /// for up to twice that.
    public let lifetime: TimeInterval
    private let key: [UInt8]

    /// Nonces under a fresh random secret: for one instance, or a fleet behind sticky sessions.
    ///
    /// - Throws: `OIDCError` (`randomFailure`) when no random bytes could be drawn.
    public init(lifetime: TimeInterval = 300) throws(OIDCError) {
        try self.init(secret: Secret(Base64URLEncoding.encode(LibCrypto.randomBytes(count: 32))), lifetime: lifetime)
    }

    /// Nonces under `secret`, which every instance of a fleet shares (at least 32 bytes of
    /// randomness, kept like any other key).
    ///
    /// - Throws: `OIDCError` (`invalidArgument`) for a secret shorter than 32 bytes or a
    ///   lifetime that is not a positive finite number of seconds.
    public init(secret: Secret, lifetime: TimeInterval = 300) throws(OIDCError) {
        guard secret.revealedValue.utf8.count >= 32 else {
            throw OIDCError(.invalidArgument, "A DPoP nonce secret needs at least 32 bytes.")
        }
        guard lifetime.isFinite, lifetime >= 1 else {
            throw OIDCError(.invalidArgument, "A DPoP nonce's lifetime must be a positive number of seconds.")
        }
        self.key = Array(secret.revealedValue.utf8)
        self.lifetime = lifetime
    }

    /// The nonce to hand out at `now`.
    public func current(at now: Date) -> String {
        nonce(window: window(at: now))
    }

    /// How a presented nonce stands at `now`.
    enum Standing: Sendable, Equatable {
        /// This window's nonce.
        case current
        /// The previous window's: accepted, and the current one is announced.
        case previous
        /// Absent, older, from the future, or not ours.
        case refused
    }

    func standing(of presented: String?, at now: Date) -> Standing {
        guard let presented, presented.utf8.count <= 64 else { return .refused }
        let window = window(at: now)
        if ConstantTime.equals(presented, nonce(window: window)) { return .current }
        if ConstantTime.equals(presented, nonce(window: window - 1)) { return .previous }
        return .refused
    }

    private func window(at now: Date) -> Int64 {
        let seconds = now.timeIntervalSince1970 / lifetime
        guard seconds.isFinite, abs(seconds) < 1e15 else { return 0 }
        return Int64(seconds.rounded(.down))
    }

    /// `base64url(window (8 bytes, big-endian) || first 16 bytes of HMAC-SHA-256(key, window))`.
    private func nonce(window: Int64) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(24)
        for shift in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: window >> Int64(shift))) }
        // HMAC with SHA-256 cannot fail short of OpenSSL being broken; a failure yields a nonce no
        // proof can match, so proofs are refused rather than accepted.
        let mac = (try? LibCrypto.hmac(digest: "SHA256", key: key, data: bytes)) ?? []
        bytes += mac.prefix(16)
        return Base64URLEncoding.encode(bytes)
    }
}

extension DPoPServerNonces: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The lifetime only: the secret is never shown.
    public var description: String { "DPoPServerNonces(lifetime: \(lifetime) s, secret: <redacted>)" }
    /// As ``description``: the secret is never shown.
    public var debugDescription: String { description }
    /// The lifetime only, so a debugger or `dump` never shows the secret.
    public var customMirror: Mirror { Mirror(self, children: ["lifetime": lifetime], displayStyle: .struct) }
}
