/// A JWT's header and claims read **without any verification**: for display and debugging only
/// (`oidc decode`). Nothing in it may be trusted; use ``IDTokenVerifier`` for that.
public struct UnverifiedJWT: Sendable {
    /// The header's JSON text, as sent.
    public let headerJSON: String
    /// The claims' JSON text, as sent.
    public let claimsJSON: String
    /// The header's members; unverified.
    public let header: [String: JSONValue]
    /// The claims; unverified.
    public let claims: [String: JSONValue]

    /// Splits and decodes `token`, at most `maximumLength` bytes long (64 KiB by default).
    ///
    /// - Throws: ``OIDCError/Code/malformedToken`` unless the token has three base64url segments whose
    ///   first two are JSON objects (any `alg`, even `none`, is shown).
    public init(_ token: String, maximumLength: Int = 65_536) throws(OIDCError) {
        guard token.utf8.count <= maximumLength else {
            throw ParsedJWS.malformed("it is \(token.utf8.count) bytes long, over the limit of \(maximumLength)")
        }
        let segments = token.utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard segments.count == 3 else { throw ParsedJWS.malformed("it needs exactly three dot-separated segments") }
        guard let headerBytes = Base64URLEncoding.decode(segments[0]), let claimBytes = Base64URLEncoding.decode(segments[1]) else {
            throw ParsedJWS.malformed("the header or payload is not unpadded base64url")
        }
        do {
            header = try StrictJSONParser.parseObject(headerBytes, maximumDepth: ParsedJWS.maximumDepth)
            claims = try StrictJSONParser.parseObject(claimBytes, maximumDepth: ParsedJWS.maximumDepth)
        } catch {
            throw ParsedJWS.malformed("the header or claims are not a valid JSON object (\(error))")
        }
        headerJSON = String(decoding: headerBytes, as: UTF8.self)
        claimsJSON = String(decoding: claimBytes, as: UTF8.self)
    }
}
