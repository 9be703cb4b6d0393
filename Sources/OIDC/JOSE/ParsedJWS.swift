/// A JWS in compact serialization (RFC 7515 §7.1), split and decoded strictly, not yet verified.
///
/// Exactly three base64url segments without padding or whitespace; a header that is a JSON object
/// without duplicate members whose `alg` is a supported algorithm (never `none`) and whose `crit`
/// names nothing (this library implements no JWS extension); a bounded total size. Keys embedded in the
/// header (`jwk`, `jku`, `x5u`, `x5c`) are never read.
package struct ParsedJWS: Sendable {
    /// The default bound on a token's length: 64 KiB.
    package static let defaultMaximumLength = 65_536
    /// Nesting bound for header and claims.
    static let maximumDepth = 16

    /// The header's `alg`: a supported algorithm, never `none`.
    package let algorithm: JWSAlgorithm
    /// The header's `kid`, if any.
    package let keyID: String?
    /// The header's `typ`, if any.
    package let type: String?
    /// The whole protected header.
    package var header: [String: JSONValue] { headerMembers.dictionary }
    private let headerMembers: JSONMembers
    /// The decoded payload bytes.
    package let payload: [UInt8]
    /// The decoded signature bytes.
    package let signature: [UInt8]
    /// `BASE64URL(header) || '.' || BASE64URL(payload)`, the bytes that were signed.
    package let signingInput: [UInt8]

    /// Splits and decodes `token`, at most `maximumLength` bytes long (64 KiB by default).
    ///
    /// - Throws: ``OIDCError/Code/malformedToken`` for anything not strictly well-formed;
    ///   ``OIDCError/Code/algorithmNotAllowed`` for `none` (any casing) or an unknown `alg`.
    package init(_ token: String, maximumLength: Int = defaultMaximumLength) throws(OIDCError) {
        var token = token
        var parsed: ParsedJWS?
        var failure: OIDCError?
        token.withUTF8 { bytes in
            do throws(OIDCError) { parsed = try Self.parse(bytes, maximumLength: maximumLength) } catch { failure = error }
        }
        guard let parsed else { throw failure ?? Self.malformed("it could not be read") }
        self = parsed
    }

    private init(
        algorithm: JWSAlgorithm, keyID: String?, type: String?, header: JSONMembers, payload: [UInt8],
        signature: [UInt8], signingInput: [UInt8]
    ) {
        self.algorithm = algorithm
        self.keyID = keyID
        self.type = type
        self.headerMembers = header
        self.payload = payload
        self.signature = signature
        self.signingInput = signingInput
    }

    static func malformed(_ reason: String, context: [String: String] = [:]) -> OIDCError {
        OIDCError(.malformedToken, "The token is not a well-formed compact JWS: \(reason).", context: context)
    }

    /// Whether `error` refused a token for a `crit` header this library does not implement (RFC 7515 §4.1.11).
    package static func refusedCriticalHeader(_ error: OIDCError) -> Bool {
        error.code == .malformedToken && error.context["header"] == "crit"
    }

    /// Whether `error` refused a token whose header is not a strict JSON object (a member given
    /// twice, bad UTF-8, too deep, not JSON).
    package static func refusedHeaderJSON(_ error: OIDCError) -> Bool {
        error.code == .malformedToken && error.context["header"] == "json"
    }

    private static func parse(_ bytes: UnsafeBufferPointer<UInt8>, maximumLength: Int) throws(OIDCError) -> ParsedJWS {
        guard bytes.count <= maximumLength else {
            throw malformed("it is \(bytes.count) bytes long, over the limit of \(maximumLength)")
        }
        guard let first = bytes.firstIndex(of: UInt8(ascii: ".")),
            let second = bytes[(first + 1)...].firstIndex(of: UInt8(ascii: "."))
        else { throw malformed("it needs exactly three dot-separated segments") }
        guard bytes[(second + 1)...].firstIndex(of: UInt8(ascii: ".")) == nil else {
            throw malformed("it has more than three segments (a JWE or garbage)")
        }
        let headerPart = UnsafeBufferPointer(rebasing: bytes[0..<first])
        let payloadPart = UnsafeBufferPointer(rebasing: bytes[(first + 1)..<second])
        let signaturePart = UnsafeBufferPointer(rebasing: bytes[(second + 1)...])
        guard !headerPart.isEmpty else { throw malformed("the header segment is empty") }
        guard let headerBytes = Base64URLEncoding.decode(headerPart) else { throw malformed("the header is not unpadded base64url") }

        let header: JSONMembers
        do { header = try StrictJSONParser.parseMembers(headerBytes, maximumDepth: maximumDepth) } catch {
            throw malformed("the header is not a valid JSON object (\(error))", context: ["header": "json"])
        }
        guard let alg = header["alg"]?.stringValue else { throw malformed("the header has no string 'alg'") }
        guard let algorithm = JWSAlgorithm(rawValue: alg) else {
            if alg.lowercased() == "none" {
                throw OIDCError(.algorithmNotAllowed, "The token is unsigned (alg 'none'); unsigned tokens are never accepted.")
            }
            throw OIDCError(
                .algorithmNotAllowed, "The token's algorithm '\(UntrustedText.sanitized(alg, limit: 32))' is not supported.",
                context: ["alg": UntrustedText.sanitized(alg, limit: 32)]
            )
        }
        guard !signaturePart.isEmpty else { throw malformed("the signature segment is empty") }
        guard let payload = Base64URLEncoding.decode(payloadPart) else { throw malformed("the payload is not unpadded base64url") }
        guard let signature = Base64URLEncoding.decode(signaturePart) else { throw malformed("the signature is not unpadded base64url") }
        if let critical = header["crit"] {
            // RFC 7515 §4.1.11: a non-empty array of names we must understand; we understand none.
            let names = critical.arrayValue?.compactMap(\.stringValue) ?? []
            throw malformed(
                names.isEmpty ? "'crit' must be a non-empty array of strings"
                    : "it requires the extension(s) \(names.map { UntrustedText.sanitized($0, limit: 32) }.joined(separator: ", ")) (crit), which this library does not implement",
                context: names.isEmpty ? [:] : ["header": "crit"]
            )
        }
        var keyID: String?
        if let kid = header["kid"] {
            guard let text = kid.stringValue else { throw malformed("'kid' must be a string") }
            keyID = text
        }
        var type: String?
        if let typ = header["typ"] {
            guard let text = typ.stringValue else { throw malformed("'typ' must be a string") }
            type = text
        }
        return ParsedJWS(
            algorithm: algorithm, keyID: keyID, type: type, header: header, payload: payload, signature: signature,
            signingInput: Array(UnsafeBufferPointer(rebasing: bytes[0..<second]))
        )
    }

    /// Verifies the signature with `key`.
    ///
    /// - Throws: what ``JWS/verify(signature:over:with:algorithm:)`` throws.
    package func verifySignature(with key: JWK) throws(OIDCError) {
        try JWS.verify(signature: signature, over: signingInput, with: key, algorithm: algorithm)
    }
}
