internal import Foundation

/// How a login's authorization request reaches the provider through the browser (the front
/// channel), chosen once in ``RelyingParty/Configuration``:
///
/// - ``plain``: the request's parameters in the URL (RFC 6749 §4.1.1);
/// - ``signed(_:)``: only inside a request object signed with the client's key, by value (RFC 9101, JAR);
/// - ``pushed``: pushed to the provider first, the URL carrying only `client_id` and the
///   `request_uri` it gave (RFC 9126, PAR);
/// - ``pushed(signedWith:)``: a signed request object, pushed.
///
/// The provider's requirements hold whatever was chosen: a provider that requires pushed requests
/// (``ProviderConfiguration/requiresPushedAuthorizationRequests``), or a security profile that does
/// (``SecurityProfile/fapi2``), gets them pushed; one that takes only signed request objects
/// (``ProviderConfiguration/requiresSignedRequestObjects``) refuses a strategy without a key.
///
/// ```swift
/// let target = try await rp.authorizationTarget(for: request)   // rp.configuration.frontChannel
/// redirect(to: target.url)                                       // before target.expiresAt
/// ```
public struct FrontChannel: Sendable {
    /// When the request is pushed: ``PushedAuthorizationUse/whenRequired`` (the provider or the
    /// security profile requires it) or ``PushedAuthorizationUse/always``.
    public var pushedAuthorization: PushedAuthorizationUse
    /// The client's private key that signs every request as a request object (RFC 9101), or `nil`.
    /// The provider must have its public key (the client's registered JWKS).
    public var requestObjectKey: JWSSigningKey?

    /// A strategy that pushes as `pushedAuthorization` says, and signs with `requestObjectKey` when given.
    public init(pushedAuthorization: PushedAuthorizationUse = .whenRequired, requestObjectKey: JWSSigningKey? = nil) {
        self.pushedAuthorization = pushedAuthorization
        self.requestObjectKey = requestObjectKey
    }

    /// The request's parameters in the URL; pushed only when the provider or the profile requires it.
    public static let plain = FrontChannel()
    /// Every request pushed first (RFC 9126): nothing of it can be read or changed in the browser.
    public static let pushed = FrontChannel(pushedAuthorization: .always)
    /// The parameters only inside a request object signed with `key` (RFC 9101), by value in the URL;
    /// pushed when the provider or the profile requires it.
    public static func signed(_ key: JWSSigningKey) -> FrontChannel { FrontChannel(requestObjectKey: key) }
    /// A request object signed with `key`, pushed (RFC 9126 §3).
    public static func pushed(signedWith key: JWSSigningKey) -> FrontChannel { FrontChannel(pushedAuthorization: .always, requestObjectKey: key) }

    /// How long the request objects of this strategy are good for: 60 s.
    static let requestObjectLifetime = Duration.seconds(60)

    /// Whether a request of `relyingParty` is pushed: the provider requires it, this strategy or
    /// the relying party's security profile says always.
    package func pushes(at relyingParty: RelyingParty) -> Bool {
        relyingParty.provider.requiresPushedAuthorizationRequests || pushedAuthorization == .always
            || relyingParty.configuration.securityProfile.pushesAuthorizationRequests
    }
}
