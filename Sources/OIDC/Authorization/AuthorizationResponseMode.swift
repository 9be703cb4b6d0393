/// How the provider returns the authorization response (`response_mode`, OAuth 2.0 Multiple
/// Response Type Encoding Practices §2.1, and JARM §2.3): the modes whose answer reaches the redirect
/// URI's query, the only place ``AuthorizationResponse`` reads.
///
/// Set it on ``AuthorizationRequest/responseMode``, or on ``RelyingParty/Configuration/responseMode`` for every
/// login of a relying party. ``RelyingParty/authorizationURL(for:)`` refuses a mode the provider's
/// discovery leaves out of `response_modes_supported` before anything is sent.
public enum AuthorizationResponseMode: String, Sendable, CaseIterable {
    /// `query`: the response parameters in the redirect URI's query, unsigned; what a code flow
    /// gets when no mode is sent.
    case query
    /// `jwt` (JARM §2.3.4): the response as one signed JWT in the `response` parameter, in the
    /// query for the code flow. FAPI 2.0 Message Signing asks for it.
    case jwt
    /// `query.jwt` (JARM §2.3.1): the response as one signed JWT in the query's `response` parameter.
    case queryJWT = "query.jwt"

    /// Whether the response comes as a signed JWT (JARM) that must be verified before anything in
    /// it is believed: ``jwt`` and ``queryJWT``.
    package var isJARM: Bool { self != .query }
}
