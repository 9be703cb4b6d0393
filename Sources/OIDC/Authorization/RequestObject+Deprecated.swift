/// The request object's name lists, public by mistake: the library's own plumbing.
extension AuthorizationRequest {
    /// Parameters whose value is JSON, written as JSON inside a request object: OIDC Core §5.5's
    /// `claims` (an object) and RFC 9396's `authorization_details` (an array).
    @available(*, deprecated, message: "jsonValuedParameters is internal plumbing: requestObject(signedWith:audience:lifetime:now:) writes claims and authorization_details as JSON itself")
    public static var jsonValuedParameters: Set<String> { jsonValuedNames }

    /// Names a request object sets itself, or must not carry (RFC 9101 §4): an additional
    /// parameter cannot use them.
    @available(*, deprecated, message: "requestObjectReservedNames is internal plumbing: requestObject(signedWith:audience:lifetime:now:) refuses these names itself (iss, aud, iat, nbf, exp, jti, request, request_uri)")
    public static var requestObjectReservedNames: Set<String> { reservedRequestObjectNames }
}
