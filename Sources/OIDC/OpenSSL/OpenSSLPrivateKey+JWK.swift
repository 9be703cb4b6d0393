internal import COpenSSL

extension OpenSSLPrivateKey {
    /// A private key from a private JWK's members (RFC 7518 §6): RSA with `n`, `e`, `d` and, when
    /// all are present, `p`, `q`, `dp`, `dq`, `qi`; EC (`P-256`, `P-384`, `P-521`) with `x`, `y`,
    /// `d`; OKP `Ed25519` with `x` and `d`. OpenSSL checks that the parts make one key pair.
    ///
    /// - Throws: ``OIDCError/Code/invalidKey`` for a missing or malformed member, a curve or type
    ///   this does not support, or parts that do not belong together.
    package convenience init(jwk members: [String: JSONValue]) throws(OIDCError) {
        func bytes(_ name: String) throws(OIDCError) -> [UInt8] {
            guard let text = members[name]?.stringValue, let value = Base64URLEncoding.decode(text), !value.isEmpty else {
                throw OIDCError(.invalidKey, "The private JWK's '\(name)' is missing or not base64url.", context: ["member": name])
            }
            return value
        }
        let key: OpaquePointer
        switch members["kty"]?.stringValue {
        case "RSA":
            var parts: [(String, UnsafePointer<CChar>?)] = [("n", coidc_param_rsa_n()), ("e", coidc_param_rsa_e()), ("d", coidc_param_rsa_d())]
            let crt: [(String, UnsafePointer<CChar>?)] = [
                ("p", coidc_param_rsa_p()), ("q", coidc_param_rsa_q()), ("dp", coidc_param_rsa_dp()), ("dq", coidc_param_rsa_dq()),
                ("qi", coidc_param_rsa_qi()),
            ]
            if crt.allSatisfy({ members[$0.0] != nil }) { parts += crt }
            var numbers: [(UnsafePointer<CChar>?, [UInt8])] = []
            for (name, parameter) in parts { numbers.append((parameter, try bytes(name))) }
            key = try Self.fromData(type: "RSA", numbers: numbers, octets: [], strings: [])
        case "EC":
            guard let curve = members["crv"]?.stringValue, let size = ["P-256": 32, "P-384": 48, "P-521": 66][curve],
                let group = Self.groupNames[curve]
            else { throw OIDCError(.invalidKey, "The private JWK's curve must be P-256, P-384 or P-521.") }
            let x = try bytes("x"), y = try bytes("y"), d = try bytes("d")
            guard x.count == size, y.count == size, d.count <= size else {
                throw OIDCError(.invalidKey, "The private JWK's coordinates do not have the size of \(curve).")
            }
            key = try Self.fromData(
                type: "EC", numbers: [(coidc_param_private_key(), d)], octets: [(coidc_param_public_key(), [0x04] + x + y)],
                strings: [(coidc_param_group_name(), group)]
            )
        case "OKP":
            guard members["crv"]?.stringValue == "Ed25519" else { throw OIDCError(.invalidKey, "The private JWK's OKP curve must be Ed25519.") }
            let d = try bytes("d")
            guard d.count == 32, let made = d.withUnsafeBufferPointer({ EVP_PKEY_new_raw_private_key_ex(nil, "ED25519", nil, $0.baseAddress, $0.count) }) else {
                _ = LibCrypto.drainErrorQueue()
                throw OIDCError(.invalidKey, "The private JWK's Ed25519 'd' is not a 32-byte private key.")
            }
            key = made
        default:
            throw OIDCError(.invalidKey, "The private JWK's kty must be RSA, EC or OKP.")
        }
        self.init(owning: key)
        if let x = members["x"]?.stringValue, members["kty"]?.stringValue == "OKP", try publicJWKMembers()["x"] != x {
            throw OIDCError(.invalidKey, "The private JWK's 'x' is not the public key of its 'd'.")
        }
        try checkPair()
    }

    /// OpenSSL's own names of the curves, as static C strings (the builder keeps the pointer).
    private static let groupNames: [String: StaticString] = ["P-256": "P-256", "P-384": "P-384", "P-521": "P-521"]

    /// A key pair from OSSL_PARAM values: big numbers, octet strings and UTF-8 strings.
    private static func fromData(
        type: String, numbers: [(UnsafePointer<CChar>?, [UInt8])], octets: [(UnsafePointer<CChar>?, [UInt8])],
        strings: [(UnsafePointer<CChar>?, StaticString)]
    ) throws(OIDCError) -> OpaquePointer {
        guard let builder = OSSL_PARAM_BLD_new() else { throw failure("OSSL_PARAM_BLD_new") }
        defer { OSSL_PARAM_BLD_free(builder) }
        var bigNumbers: [OpaquePointer] = []
        defer { for number in bigNumbers { BN_clear_free(number) } }
        for (name, value) in numbers {
            guard let number = value.withUnsafeBufferPointer({ BN_bin2bn($0.baseAddress, Int32($0.count), nil) }) else { throw failure("BN_bin2bn") }
            bigNumbers.append(number)
            guard OSSL_PARAM_BLD_push_BN(builder, name, number) == 1 else { throw failure("OSSL_PARAM_BLD_push_BN") }
        }
        for (name, value) in strings {
            let text = UnsafeRawPointer(value.utf8Start).assumingMemoryBound(to: CChar.self)
            guard OSSL_PARAM_BLD_push_utf8_string(builder, name, text, 0) == 1 else { throw failure("OSSL_PARAM_BLD_push_utf8_string") }
        }
        // Octet strings are kept by pointer until to_param copies them: all inside their closures.
        return try pushOctets(octets[...], into: builder) { () throws(OIDCError) -> OpaquePointer in
            guard let params = OSSL_PARAM_BLD_to_param(builder) else { throw failure("OSSL_PARAM_BLD_to_param") }
            defer { OSSL_PARAM_free(params) }
            guard let context = EVP_PKEY_CTX_new_from_name(nil, type, nil) else { throw failure("EVP_PKEY_CTX_new_from_name") }
            defer { EVP_PKEY_CTX_free(context) }
            var key: OpaquePointer?
            guard EVP_PKEY_fromdata_init(context) == 1, EVP_PKEY_fromdata(context, &key, coidc_selection_keypair(), params) == 1, let key else {
                let reason = LibCrypto.drainErrorQueue()
                throw OIDCError(.invalidKey, "OpenSSL refused the \(type) private key's parameters: \(reason)")
            }
            return key
        }
    }

    private static func pushOctets<T>(
        _ octets: ArraySlice<(UnsafePointer<CChar>?, [UInt8])>, into builder: OpaquePointer, then body: () throws(OIDCError) -> T
    ) throws(OIDCError) -> T {
        guard let (name, value) = octets.first else { return try body() }
        return try value.withUnsafeBufferPointer { (buffer) throws(OIDCError) -> T in
            guard OSSL_PARAM_BLD_push_octet_string(builder, name, buffer.baseAddress, buffer.count) == 1 else {
                throw failure("OSSL_PARAM_BLD_push_octet_string")
            }
            return try pushOctets(octets.dropFirst(), into: builder, then: body)
        }
    }
}
