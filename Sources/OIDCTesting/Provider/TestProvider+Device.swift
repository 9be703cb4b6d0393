public import Foundation

extension TestProvider {
    /// How the device authorization grant (RFC 8628) behaves.
    public struct DeviceFlow: Sendable, Equatable {
        /// `expires_in` of a device code, in seconds (5 minutes by default).
        public var expiresIn: Int
        /// `interval` in seconds (5 by default; 1 keeps tests short); `nil` sends none, so that a
        /// client must take the RFC's 5 s.
        public var interval: Int?
        /// Whether a poll that comes sooner than the interval after the previous one is answered
        /// `slow_down` (and the interval grows by 5 s), as RFC 8628 §3.5 lets a server do.
        public var enforcesInterval: Bool
        /// Whether the discovery document names the device authorization endpoint (it answers
        /// either way): `false` plays a provider whose clients are given the endpoint by hand.
        public var advertised: Bool
        /// Whether the device grant's token response carries an ID token when `openid` was asked
        /// for (the default). RFC 8628 promises none: `false` plays django-oauth-toolkit 3.4, whose
        /// device grant sends none (its refreshes do, as this provider's then do).
        public var issuesIDTokens: Bool

        /// A device flow with the given settings.
        public init(expiresIn: Int = 300, interval: Int? = 5, enforcesInterval: Bool = true, advertised: Bool = true, issuesIDTokens: Bool = true) {
            self.expiresIn = expiresIn
            self.interval = interval
            self.enforcesInterval = enforcesInterval
            self.advertised = advertised
            self.issuesIDTokens = issuesIDTokens
        }
    }

    /// What the next poll of a device code is answered, whatever else holds: a test's script.
    public enum DevicePollOutcome: Sendable, Equatable {
        /// `authorization_pending`, with a `Retry-After` of that many seconds when given.
        case pending(retryAfter: Int? = nil)
        /// `slow_down`, with a new `interval` in the answer when given.
        case slowDown(interval: Int? = nil)
        /// The user approves: this poll gets the tokens.
        case approve
        /// The user refuses: `access_denied`.
        case deny
        /// The code has expired: `expired_token`.
        case expire
    }

    /// `{issuer}/device_authorization` (RFC 8628 §3.1).
    public var deviceAuthorizationEndpoint: String { issuer + ProviderPaths.deviceAuthorization }
    /// `{issuer}/device`: the verification page, where the user enters the code and approves.
    public var deviceVerificationURI: String { issuer + ProviderPaths.deviceVerification }

    /// The next polls of every device code are answered these outcomes, in turn (then as the state
    /// says: pending until approved).
    public func scriptDevicePolls(_ outcomes: [DevicePollOutcome]) async {
        await state.scriptDevicePolls(outcomes)
    }

    /// The user approves the device login of `userCode`, as the verification page's Approve does.
    ///
    /// - Returns: whether such a pending login existed.
    @discardableResult
    public func approveDeviceLogin(userCode: String) async -> Bool {
        await state.decideDevice(userCode: userCode, approve: true)
    }

    /// The user refuses the device login of `userCode`.
    @discardableResult
    public func denyDeviceLogin(userCode: String) async -> Bool {
        await state.decideDevice(userCode: userCode, approve: false)
    }

    /// The user codes of the device logins nobody has approved or refused yet, oldest first: what
    /// a test that plays the user reads before it approves one.
    public func pendingDeviceUserCodes() async -> [String] {
        await state.pendingDeviceUserCodes()
    }

    /// When each device-code poll reached the token endpoint, oldest first (by the real clock, not
    /// the provider's), faulted ones not included.
    public func devicePollTimes() async -> [Date] {
        await state.devicePollTimes
    }
}
