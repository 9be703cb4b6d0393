/// Mutual TLS (RFC 8705): what a relying party's transport and client authentication make of it,
/// for checks such as FAPI 2.0's "sender-constrained tokens" and "client authentication".
extension RelyingParty {
    /// Whether the relying party uses mutual TLS at all: its transport presents a client certificate,
    /// or its client authenticates with `tls_client_auth` or `self_signed_tls_client_auth`. Its
    /// token, revocation, introspection, device authorization, pushed authorization and userinfo
    /// requests then go to the provider's `mtls_endpoint_aliases` where it has them.
    public var usesMutualTLS: Bool { tokenClient.usesMutualTLS }

    /// Whether the access tokens of this relying party are sender-constrained by mutual TLS (RFC 8705
    /// §3): its transport presents a client certificate, to the provider (which binds the tokens to
    /// it when it supports that, ``ProviderConfiguration/tlsClientCertificateBoundAccessTokens``) and
    /// to the APIs its sessions call over the same transport. The FAPI 2.0 profile takes this as
    /// "sender-constrained tokens" only where the provider also says it binds them
    /// (``ProviderConfiguration/tlsClientCertificateBoundAccessTokens``), or DPoP.
    public var sendsCertificateBoundTokens: Bool { transport.presentsClientCertificate }

    /// Whether the client proves itself with its TLS client certificate (`tls_client_auth` or
    /// `self_signed_tls_client_auth`, RFC 8705 §2). A FAPI 2.0 check of "client authentication"
    /// takes this or `private_key_jwt`.
    public var authenticatesWithMutualTLS: Bool { tokenClient.authentication.method.isMutualTLS }
}
