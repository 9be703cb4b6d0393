import Foundation

extension TestProvider {
    /// How the provider answers backchannel logins (OpenID CIBA Core 1.0): at
    /// `{issuer}/bc-authorize`, for confidential clients, `openid` in the scope and a `login_hint`
    /// naming the configured user (its subject or e-mail address; anyone else is `unknown_user_id`).
    /// Nobody approves until the test says so (``approveBackchannelLogin(loginHint:)``).
    public struct CIBA: Sendable, Equatable {
        /// `expires_in` of each request, in seconds.
        public var expiresIn: Int
        /// `interval`, in seconds; `nil` sends none (the client's default is 5 s).
        public var interval: Int?
        /// Whether a poll sooner than the interval after the last gets `slow_down` (and the
        /// interval grows by 5 s), as CIBA Core §11 allows.
        public var enforcesInterval: Bool

        /// The settings; each default is the one its property names.
        public init(expiresIn: Int = 120, interval: Int? = 5, enforcesInterval: Bool = true) {
            self.expiresIn = expiresIn
            self.interval = interval
            self.enforcesInterval = enforcesInterval
        }
    }

    /// A backchannel login waiting for its user, as a test sees it.
    public struct BackchannelRequest: Sendable, Equatable {
        /// `login_hint`.
        public var loginHint: String
        /// `binding_message`, if sent.
        public var bindingMessage: String?
        /// `scope`.
        public var scope: String
        /// `acr_values`, if sent.
        public var acrValues: String?
        /// `client_notification_token` (ping mode), if sent.
        public var clientNotificationToken: String?
        /// `auth_req_id`, which a ping-mode notification names.
        public var requestID: String
    }

    /// The backchannel logins waiting for their user, oldest first.
    public func pendingBackchannelLogins() async -> [BackchannelRequest] {
        await state.pendingBackchannelLogins()
    }

    /// The user approves the pending backchannel login of `loginHint` on their device; `false` when
    /// there is none.
    @discardableResult
    public func approveBackchannelLogin(loginHint: String) async -> Bool {
        await state.decideBackchannel(loginHint: loginHint, approve: true)
    }

    /// The user refuses the pending backchannel login of `loginHint`; `false` when there is none.
    @discardableResult
    public func denyBackchannelLogin(loginHint: String) async -> Bool {
        await state.decideBackchannel(loginHint: loginHint, approve: false)
    }

    /// `{issuer}/bc-authorize`.
    public var backchannelAuthenticationEndpoint: String { issuer + ProviderPaths.backchannelAuthentication }
}
