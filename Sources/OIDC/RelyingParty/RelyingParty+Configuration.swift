internal import Foundation

extension RelyingParty {
    /// How a ``RelyingParty`` logs in and holds its tokens: given once, when it is made, and never
    /// changed after, so every copy of the relying party, every login and every session it makes
    /// follow the same settings. Every setting has a default (a plain OAuth 2.0 / OpenID Connect
    /// client: bearer tokens, the request in the URL, no profile).
    ///
    /// ```swift
    /// let rp = try await RelyingParty.discover(
    ///     issuer: "https://login.example.com", clientID: "my-cli",
    ///     configuration: RelyingParty.Configuration(frontChannel: .pushed, dpop: .on))
    /// ```
    public struct Configuration: Sendable {
        /// How the authorization request reaches the provider through the browser: ``FrontChannel/plain``
        /// by default (pushed only when the provider or the profile requires it).
        public var frontChannel: FrontChannel
        /// Whether logins get DPoP-bound tokens (RFC 9449), and with which key: ``DPoPUse/off`` by
        /// default; ``DPoPUse/on`` makes a new ES256 key for each login, which the login keeps
        /// (``StoredLogin/dpopKey``). The code is bound too (`dpop_jkt`), every token request carries
        /// a proof, and a `Bearer` answer is refused.
        public var dpop: DPoPUse
        /// The security profile every login and session is held to: ``SecurityProfile/none`` by
        /// default; ``SecurityProfile/fapi2`` pushes every authorization request, requires the `iss`
        /// of RFC 9207 in every callback and ID tokens signed with PS256, ES256 or EdDSA (refreshed
        /// ones too), and refuses, before anything is sent, a login without a sender constraint or
        /// with shared-secret client authentication (`SecurityProfile.validate(_:)`).
        public var securityProfile: SecurityProfile
        /// The `response_mode` of every login's request: `nil` (the default) sends none.
        /// ``AuthorizationResponseMode/jwt`` asks for signed responses (JARM), which
        /// ``RelyingParty/completeLogin(callback:for:now:)`` and ``LoopbackLogin`` verify with the
        /// provider's keys before anything in them is used, refusing a plain `code` as a downgrade.
        /// FAPI 2.0 Message Signing needs it; the plain Security Profile does not.
        public var responseMode: AuthorizationResponseMode?
        /// Your own stages of the provider pipeline (tracing, metrics, a header; see <doc:Pipelines>):
        /// every call to the provider's endpoints passes them, in order, after the token client's own
        /// ``TokenClient/stages``. None by default.
        public var providerStages: [any HTTPStage]
        /// Your own stages of the resource pipeline: every request of every session this relying
        /// party makes passes them, in order, before the session's own ``AuthenticatedSession/Options/stages``.
        /// None by default.
        public var resourceStages: [any HTTPStage]
        /// Your own stages of the provider pipeline at the OAuth level (``ProviderStage``): every call
        /// to the provider passes them, as a value (its form parameters, its headers), after the
        /// library's parameters and before client authentication and the proof. None by default.
        public var providerRequestStages: [any ProviderStage]
        /// Your own stages around each whole call (``CallStage``), of both pipelines: every call to
        /// the provider and every request of every session this relying party makes, once per call,
        /// with its outcome after retries and refreshes. None by default.
        public var callStages: [any CallStage]

        /// A configuration with the given settings; every one has a default.
        public init(
            frontChannel: FrontChannel = .plain, dpop: DPoPUse = .off, securityProfile: SecurityProfile = .none,
            responseMode: AuthorizationResponseMode? = nil, providerStages: [any HTTPStage] = [], resourceStages: [any HTTPStage] = [],
            providerRequestStages: [any ProviderStage] = [], callStages: [any CallStage] = []
        ) {
            self.frontChannel = frontChannel
            self.dpop = dpop
            self.securityProfile = securityProfile
            self.responseMode = responseMode
            self.providerStages = providerStages
            self.resourceStages = resourceStages
            self.providerRequestStages = providerRequestStages
            self.callStages = callStages
        }
    }
}
