internal import Foundation

/// Where a DPoP binding shows outside the DPoP stages: the code bound to the key at the
/// authorization endpoint (`dpop_jkt`, RFC 9449 §10), the key a token client proves, and the binding
/// kept with a stored login.
extension AuthorizationRequest {
    /// `dpop_jkt` with the key's thumbprint when the request has a DPoP key (RFC 9449 §10: the
    /// code can then be redeemed only with a proof of that key); none otherwise.
    var dpopBindingParameters: [OAuthParameter] {
        dpopKey.map { [OAuthParameter("dpop_jkt", $0.thumbprint)] } ?? []
    }
}

extension TokenClient {
    /// The key this client proves possession of (its ``dpop``'s), `nil` for bearer tokens.
    var provingKey: DPoPKey? { dpop?.key }
}

extension StoredLogin {
    /// The stored form of the login's binding: `{"jkt", "alg", "key"}` (the key as PEM, sealed with
    /// the rest of the login when the store encrypts), `nil` for a bearer login.
    func serializedDPoPBinding() throws(OIDCError) -> [String: Any]? {
        guard let dpopThumbprint else { return nil }
        var binding: [String: Any] = ["jkt": dpopThumbprint]
        if let dpopKey {
            binding["alg"] = dpopKey.algorithm.rawValue
            binding["key"] = try dpopKey.privateKeyPEM()
        }
        return binding
    }

    /// The binding read back: its thumbprint and key, `nil` when there is no thumbprint (a corrupt
    /// entry). A key that is missing or does not read is a lost key: the session asks to log in again.
    static func dpopBinding(_ value: JSONValue) -> (thumbprint: String, key: DPoPKey?)? {
        guard let members = value.objectValue, let thumbprint = members["jkt"]?.stringValue else { return nil }
        let key = members["key"]?.stringValue.flatMap { pem in
            try? DPoPKey(pem: pem, algorithm: members["alg"]?.stringValue.flatMap(JWSAlgorithm.init(rawValue:)))
        }
        return (thumbprint, key)
    }
}
