internal import Foundation

/// A TLS public-key pin: connections to ``host`` (and, with ``includesSubdomains``, to any of its
/// subdomains) succeed only if the server's certificate chain is trusted **and** one of its
/// certificates carries a public key whose SHA-256 is in ``sha256``.
///
/// The hash is over the DER SubjectPublicKeyInfo, base64 with padding, as in HPKP (RFC 7469 §2.4),
/// the Subaio and Swedbank Pay SDKs, and `openssl x509 -pubkey -noout | openssl pkey -pubin -outform der
/// | openssl dgst -sha256 -binary | base64`. Pin the key of your own intermediate or leaf, and add a
/// backup pin for the key you will rotate to: a connection whose chain matches no pin is refused
/// before any request byte is sent, so pinning a key you lose locks your users out.
///
/// Pinning adds to certificate verification, it never replaces it: the chain must still lead to a
/// trusted root and name the host.
///
/// ```swift
/// let pin = PublicKeyPin(host: "example.com", includesSubdomains: true,
///                        sha256: ["Pig4wbL3nNFI+X/lHTNr+OSzNCgOVqyFcTlfoV9qJTU=", "<backup>"])
/// ```
public struct PublicKeyPin: Sendable, Equatable {
    /// A DNS name (`api.example.com`) or an IP literal (`127.0.0.1`, `::1`), compared
    /// case-insensitively. No wildcards: use ``includesSubdomains``.
    public var host: String
    /// Whether the pin also applies to every subdomain of ``host`` at any depth (`a.example.com`,
    /// `b.a.example.com`), as HPKP's `includeSubDomains`. Off by default.
    public var includesSubdomains: Bool
    /// Base64 SHA-256 digests of acceptable SubjectPublicKeyInfos; one match in the chain suffices.
    public var sha256: [String]

    /// A pin for `host` (and its subdomains when `includesSubdomains`) that accepts any of the `sha256`
    /// digests. Nothing is checked here: ``NIOHTTPTransport/Configuration/validate()`` checks the pins,
    /// and a transport with a malformed one refuses every request.
    public init(host: String, includesSubdomains: Bool = false, sha256: [String]) {
        self.host = host
        self.includesSubdomains = includesSubdomains
        self.sha256 = sha256
    }

    /// Whether this pin applies to `host`.
    package func applies(to host: String) -> Bool {
        let candidate = Self.normalized(host)
        let pinned = Self.normalized(self.host)
        guard !pinned.isEmpty else { return false }
        return candidate == pinned || (includesSubdomains && candidate.hasSuffix("." + pinned))
    }

    /// The pin (base64 SHA-256 of the SubjectPublicKeyInfo) of a PEM certificate
    /// (`-----BEGIN CERTIFICATE-----`, the first one if several) or public key
    /// (`-----BEGIN PUBLIC KEY-----`).
    ///
    /// - Throws: ``OIDCError/Code/invalidArgument`` when the text is neither.
    public static func sha256(ofPEM pem: String) throws(OIDCError) -> String {
        Data(try X509ChainVerifier.spkiSHA256(pem: pem)).base64EncodedString()
    }

    /// Checks the host and that every digest is the base64 of 32 bytes.
    ///
    /// - Throws: ``OIDCError/Code/invalidArgument``.
    func validate() throws(OIDCError) {
        let pinned = Self.normalized(host)
        guard !pinned.isEmpty, !pinned.contains("*"), !pinned.contains("/") else {
            throw .invalidArgument(
                "A public-key pin needs a host name or IP address without wildcards (use includesSubdomains).",
                context: ["host": host]
            )
        }
        guard !sha256.isEmpty else {
            throw .invalidArgument("The public-key pin for '\(pinned)' lists no SHA-256 digest.", context: ["host": pinned])
        }
        for digest in sha256 where Data(base64Encoded: digest)?.count != 32 {
            throw .invalidArgument(
                "A public-key pin for '\(pinned)' is not the base64 of a SHA-256 digest (32 bytes); see PublicKeyPin.sha256(ofPEM:).",
                context: ["host": pinned, "pin": digest]
            )
        }
    }

    /// The decoded digests (after ``validate()``).
    var digests: [[UInt8]] { sha256.compactMap { Data(base64Encoded: $0).map(Array.init) } }

    /// Lower case, without brackets or a trailing dot.
    static func normalized(_ host: String) -> String {
        var h = host.lowercased()
        if h.hasPrefix("["), h.hasSuffix("]") { h = String(h.dropFirst().dropLast()) }
        if h.hasSuffix(".") { h.removeLast() }
        return h
    }
}
