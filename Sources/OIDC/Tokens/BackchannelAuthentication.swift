public import Foundation

extension GrantType {
    /// `urn:openid:params:grant-type:ciba` (OpenID CIBA Core 1.0 §10.1): the token request of a
    /// backchannel login.
    public static let ciba = GrantType(rawValue: "urn:openid:params:grant-type:ciba")
}

extension ProviderCall {
    /// A backchannel authentication request (CIBA Core §7.1), with the client's authentication.
    public static let backchannelAuthentication = ProviderCall(
        logName: "backchannel_authentication", endpointName: "backchannel authentication endpoint", carriesProof: false)
}

/// What a backchannel authentication request (OpenID CIBA Core 1.0 §7.1) asks: whom to ask
/// (``loginHint``), what to show them on their device (``bindingMessage``), and what for.
public struct BackchannelAuthenticationRequest: Sendable {
    /// The most characters of a ``bindingMessage``: it is shown on a phone beside the client's.
    public static let bindingMessageLimit = 256

    /// `login_hint`: who is to approve (an e-mail address, a phone number, a user id the provider knows).
    public var loginHint: String
    /// `binding_message`: a short text shown both here and on the user's device, so that they can
    /// tell this request from another.
    public var bindingMessage: String?
    /// `acr_values`: the authentication context classes asked for; the ID token's `acr` must be one
    /// of them.
    public var acrValues: [String]?
    /// The scope values; `openid` is always asked for.
    public var scopes: [String]
    /// `client_notification_token` (ping mode, §7.1): the bearer token the provider's notification
    /// to the client's endpoint carries; `nil` in poll mode.
    public var clientNotificationToken: Secret?
    /// More parameters of the request (`requested_expiry`, `user_code`, …).
    public var parameters: [OAuthParameter]

    /// A request for `loginHint`'s approval.
    public init(
        loginHint: String, bindingMessage: String? = nil, acrValues: [String]? = nil, scopes: [String] = [],
        clientNotificationToken: Secret? = nil, parameters: [OAuthParameter] = []
    ) {
        self.loginHint = loginHint
        self.bindingMessage = bindingMessage
        self.acrValues = acrValues
        self.scopes = scopes
        self.clientNotificationToken = clientNotificationToken
        self.parameters = parameters
    }

    /// Checks what ``RelyingParty/backchannelLogin(_:)`` checks before sending: the hint, the
    /// binding message and the ACR values plain text, no parameter the library sets.
    package func validate() throws(OIDCError) {
        _ = try form(scopes: ["openid"])
    }

    /// The form, once every value is text a person can read (no control, format or separator
    /// character: they are shown on the user's device).
    func form(scopes asked: [String]) throws(OIDCError) -> [OAuthParameter] {
        func text(_ value: String, _ name: String, limit: Int) throws(OIDCError) -> String {
            guard !value.isEmpty, value.count <= limit, !value.unicodeScalars.contains(where: { UntrustedText.isUnsafe($0) && $0 != " " }) else {
                throw .invalidArgument("\(name) must be 1 to \(limit) characters with no control, format or line-breaking character (it is shown on the user's device).")
            }
            return value
        }
        if let reserved = parameters.first(where: { ["login_hint", "binding_message", "acr_values", "scope", "client_notification_token"].contains($0.name) || TokenClient.reservedGrantParameters.contains($0.name) }) {
            throw .invalidArgument("The parameter '\(UntrustedText.sanitized(reserved.name, limit: 64))' is set by the library: use the request's own property.")
        }
        var form = [OAuthParameter("scope", try AuthorizationRequest.scopeValue(asked)), OAuthParameter("login_hint", try text(loginHint, "login_hint", limit: 1024))]
        if let bindingMessage { form.append(OAuthParameter("binding_message", try text(bindingMessage, "binding_message", limit: Self.bindingMessageLimit))) }
        if let acrValues, !acrValues.isEmpty { form.append(OAuthParameter("acr_values", try text(acrValues.joined(separator: " "), "acr_values", limit: 1024))) }
        if let token = clientNotificationToken { form.append(OAuthParameter("client_notification_token", token.revealedValue)) }
        return form + parameters
    }
}

/// The provider's answer to a backchannel authentication request (CIBA Core §7.3): the request's
/// id, which the token requests present, how long it lives and how often to poll.
public struct BackchannelAuthentication: Sendable {
    /// `auth_req_id`: a credential, never logged or shown.
    public let requestID: Secret
    /// When the request expires, by this machine's clock (`expires_in`, at most a day).
    public let expiresAt: Date
    /// How often to poll: `interval`, 5 s when the provider sends none (or 0).
    public let interval: Duration
    /// The scope values asked for.
    public let scopes: [String]

    /// The answer `json`, received at `receivedAt`.
    ///
    /// - Throws: ``OIDCError/Code/malformedResponse`` without `auth_req_id` or a positive
    ///   `expires_in`, or with an `interval` over an hour.
    package init(json: [UInt8], receivedAt: Date, scopes: [String]) throws(OIDCError) {
        let object: [String: JSONValue]
        do { object = try StrictJSONParser.parseObject(json) } catch {
            throw OIDCError(.malformedResponse, "The backchannel authentication answer is not a valid JSON object (\(error)).")
        }
        let members = JSONObjectReader(object, document: "The backchannel authentication answer")
        guard let id = try members.nonEmptyString("auth_req_id"), id.utf8.count <= 4096,
            !id.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value > 0x7E })
        else {
            throw OIDCError(.malformedResponse, "The backchannel authentication answer has no usable auth_req_id (CIBA Core §7.3).")
        }
        guard let expiresIn = try members.seconds("expires_in"), expiresIn > 0 else {
            throw OIDCError(.malformedResponse, "The backchannel authentication answer has no positive expires_in (CIBA Core §7.3).")
        }
        let interval = try members.seconds("interval") ?? 5
        guard interval <= 3600 else {
            throw OIDCError(.malformedResponse, "The backchannel authentication answer's interval is \(interval) s; more than an hour is refused.")
        }
        requestID = Secret(id)
        // An absurd lifetime is bounded: nobody waits a day for a phone.
        expiresAt = receivedAt.addingTimeInterval(min(expiresIn, 86_400))
        self.interval = .milliseconds(Int64(((interval > 0 ? interval : 5) * 1000).rounded(.up)))
        self.scopes = scopes
    }
}

extension TokenClient {
    /// Asks the provider to authenticate a user on their own device (CIBA Core §7.1): the request
    /// at the `backchannel_authentication_endpoint`, with the client's authentication.
    ///
    /// - Throws: ``OIDCError/Code/invalidArgument`` for a public client, a provider without the
    ///   endpoint, or a hint or binding message that is not plain text; the provider's refusal
    ///   (`unknown_user_id`, `invalid_binding_message`, …) as ``OIDCError/Code/providerError``.
    ///
    /// With `key`, the request is signed (CIBA Core §7.1.1, as FAPI-CIBA asks): its parameters
    /// become the claims of a JWT with `iss` the client, `aud` the issuer, `iat`, `nbf`, `exp` 5
    /// minutes on and a random `jti`, sent as `request` alone (beside the client's authentication).
    public func requestBackchannelAuthentication(
        _ request: BackchannelAuthenticationRequest, scopes: [String], signedWith key: JWSSigningKey? = nil
    ) async throws(OIDCError) -> BackchannelAuthentication {
        guard authentication.method != .none else {
            throw .invalidArgument("A backchannel login (CIBA) needs a confidential client: configure its secret or private key.")
        }
        let url = try endpoint(provider.backchannelAuthenticationEndpoint, "backchannel authentication endpoint")
        var form = try request.form(scopes: scopes)
        if let key { form = [OAuthParameter("request", try signedRequest(form, key: key))] }
        return try await post(form, .backchannelAuthentication, to: url) { [now] (response: HTTPResponse) throws(OIDCError) -> BackchannelAuthentication in
            try BackchannelAuthentication(json: response.body, receivedAt: now(), scopes: scopes)
        }
    }

    /// `form` as a signed authentication request (CIBA Core §7.1.1): `requested_expiry` a number,
    /// the other parameters strings.
    private func signedRequest(_ form: [OAuthParameter], key: JWSSigningKey) throws(OIDCError) -> String {
        var claims: [String: JSONValue] = [:]
        for parameter in form {
            if parameter.name == "requested_expiry", let seconds = Double(parameter.value) {
                claims[parameter.name] = .number(seconds)
            } else {
                claims[parameter.name] = .string(parameter.value)
            }
        }
        try AuthorizationRequest.stampRequestClaims(&claims, clientID: clientID, audience: provider.issuer, lifetime: .seconds(300), now: now())
        return try key.sign(claims: claims)
    }

    /// One token request of a backchannel login (CIBA Core §10.1): the tokens once the user
    /// approved, or that the wait goes on (`authorization_pending`, `slow_down`).
    public func pollBackchannelToken(_ authentication: BackchannelAuthentication) async throws(OIDCError) -> DevicePoll {
        let form = [OAuthParameter("grant_type", GrantType.ciba.rawValue), OAuthParameter("auth_req_id", authentication.requestID.revealedValue)]
        let url = try endpoint(provider.tokenEndpoint, "token endpoint")
        let now = now()
        return try await post(form, .grant(.ciba), to: url, passing: { Self.waiting(in: $0, now: now) != nil }) {
            [self] (response: HTTPResponse) throws(OIDCError) -> DevicePoll in
            if let waiting = Self.waiting(in: response, now: now) { return waiting }
            return .tokens(try tokens(from: response, requestedScopes: authentication.scopes, grantType: GrantType.ciba.rawValue))
        }
    }
}
