internal import Foundation
internal import OIDC
internal import NIOSSL

extension TestProvider {
    /// Mutual TLS at the provider (RFC 8705), with ``Configuration/tls``: the TLS layer asks every
    /// client for a certificate (optional, any certificate accepted there: the endpoints decide), the
    /// token endpoint authenticates `tls_client_auth` and `self_signed_tls_client_auth` clients by
    /// theirs, access tokens issued over a connection with a certificate are bound to it (`cnf`
    /// `x5t#S256` in introspection), and the userinfo endpoint and the protected resource refuse a
    /// bound token over a connection without that certificate.
    ///
    /// Discovery says `tls_client_certificate_bound_access_tokens` and names `mtls_endpoint_aliases`
    /// (RFC 8705 §5) under ``aliasPathPrefix``; ``TestProvider/mutualTLSRequestCount(_:)`` counts
    /// the requests that came through them.
    public struct MutualTLS: Sendable, Equatable {
        /// The certificate authorities (PEM) that issue `tls_client_auth` certificates; the leaf
        /// must be issued by one of them directly.
        public var clientCertificateAuthoritiesPEM: [String]
        /// Whether access tokens issued over a connection with a client certificate are bound to it
        /// (RFC 8705 §3); on by default.
        public var bindsAccessTokens: Bool
        /// The path between the issuer and an endpoint's own path of the aliases (`/mtls`: the token
        /// endpoint's alias is `{issuer}/mtls/token`); `nil` advertises no aliases.
        public var aliasPathPrefix: String?

        /// Mutual TLS trusting `clientCertificateAuthoritiesPEM` for `tls_client_auth`, binding tokens,
        /// aliases under `/mtls` unless told otherwise.
        public init(clientCertificateAuthoritiesPEM: [String] = [], bindsAccessTokens: Bool = true, aliasPathPrefix: String? = "/mtls") {
            self.clientCertificateAuthoritiesPEM = clientCertificateAuthoritiesPEM
            self.bindsAccessTokens = bindsAccessTokens
            self.aliasPathPrefix = aliasPathPrefix
        }
    }

    /// How many requests to `endpoint` came through its mutual-TLS alias (``MutualTLS/aliasPathPrefix``).
    public func mutualTLSRequestCount(_ endpoint: Endpoint) async -> Int {
        await state.aliasRequestCount(endpoint)
    }
}

extension TestProvider.Client {
    /// A client that authenticates with `tls_client_auth` (RFC 8705 §2.1): a certificate issued by one
    /// of ``TestProvider/MutualTLS/clientCertificateAuthoritiesPEM`` whose subject is `subjectDN`
    /// (RFC 4514 text, `CN=client`).
    public static func tlsClientAuth(id: String, subjectDN: String, redirectURIs: [String] = ["http://127.0.0.1/callback"]) -> Self {
        var client = Self(id: id, authentication: .tlsClientAuth, redirectURIs: redirectURIs)
        client.tlsClientAuthSubjectDN = subjectDN
        return client
    }

    /// A client that authenticates with `self_signed_tls_client_auth` (RFC 8705 §2.2): one of the
    /// certificates `certificatesPEM` (compared whole).
    public static func selfSignedTLSClientAuth(id: String, certificatesPEM: [String], redirectURIs: [String] = ["http://127.0.0.1/callback"]) -> Self {
        var client = Self(id: id, authentication: .selfSignedTLSClientAuth, redirectURIs: redirectURIs)
        client.tlsClientCertificatesPEM = certificatesPEM
        return client
    }

    /// Refuses an mTLS client the provider could never authenticate.
    func validateMutualTLS(_ mutualTLS: TestProvider.MutualTLS?) throws(OIDCError) {
        let context = ["clientID": id]
        guard let mutualTLS else {
            throw OIDCError(.invalidArgument, "A \(authentication.rawValue) client needs the configuration's mutualTLS.", context: context)
        }
        switch authentication {
        case .tlsClientAuth:
            guard tlsClientAuthSubjectDN?.isEmpty == false, !mutualTLS.clientCertificateAuthoritiesPEM.isEmpty else {
                throw OIDCError(
                    .invalidArgument, "A tls_client_auth client needs its subject DN, and mutualTLS a certificate authority.", context: context)
            }
        default:
            guard !registeredCertificates.isEmpty else {
                throw OIDCError(
                    .invalidArgument, "A self_signed_tls_client_auth client needs a registered certificate (PEM, or x5c in its JWKS).",
                    context: context)
            }
        }
    }

    /// The DER of every certificate the client registered: ``tlsClientCertificatesPEM`` and the
    /// first `x5c` certificate of each key of ``jwks`` (RFC 8705 §2.2).
    var registeredCertificates: [[UInt8]] {
        var certificates: [[UInt8]] = []
        for pem in tlsClientCertificatesPEM {
            let parsed = (try? NIOSSLCertificate.fromPEMBytes(Array(pem.utf8))) ?? []
            certificates += parsed.compactMap { try? $0.toDERBytes() }
        }
        if let jwks, let object = try? StrictJSONParser.parseObject(Array(jwks.utf8)), let keys = object["keys"]?.arrayValue {
            for key in keys {
                guard let first = key.objectValue?["x5c"]?.arrayValue?.first?.stringValue, let der = Data(base64Encoded: first) else { continue }
                certificates.append(Array(der))
            }
        }
        return certificates
    }
}
