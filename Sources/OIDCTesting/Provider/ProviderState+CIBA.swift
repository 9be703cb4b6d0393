internal import Foundation
internal import OIDC

/// A backchannel login waiting for its user (CIBA).
struct BackchannelRecord: Sendable {
    var clientID: String
    var request: TestProvider.BackchannelRequest
    var expiresAt: Date
    var interval: Int
    var lastPoll: Date?
    /// `nil` while pending; then approved or denied.
    var approved: Bool?
    var spent = false
}

extension ProviderState {
    /// `/bc-authorize` (CIBA Core §7): a pending login for `client`, its `auth_req_id` answered.
    func authorizeBackchannel(client: TestProvider.Client, parameters: [OAuthParameter]) throws(OAuthError) -> ProviderResponse {
        guard !client.isPublic else { throw OAuthError(code: "unauthorized_client", description: "A public client cannot use CIBA.") }
        guard let scope = parameters.nonEmpty("scope"), scope.split(separator: " ").contains("openid") else {
            throw .invalidScope("A backchannel login asks for the openid scope.")
        }
        let hints = ["login_hint", "id_token_hint", "login_hint_token"].filter { parameters[$0] != nil }
        guard hints.count == 1, let hint = parameters.nonEmpty("login_hint") else {
            throw .invalidRequest("Give exactly one hint; this provider takes login_hint.")
        }
        guard hint == user.subject || hint == user.email else { throw OAuthError(code: "unknown_user_id", description: "Nobody here is known by that hint.") }
        let message = parameters["binding_message"]
        if let message, message.isEmpty || message.count > 256 || message.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) {
            throw OAuthError(code: "invalid_binding_message", description: "The binding message is not short plain text.")
        }
        let id = try Self.randomToken()
        let settings = configuration.ciba
        backchannelRequests[id] = BackchannelRecord(
            clientID: client.id,
            request: TestProvider.BackchannelRequest(
                loginHint: hint, bindingMessage: message, scope: scope, acrValues: parameters["acr_values"],
                clientNotificationToken: parameters["client_notification_token"], requestID: id),
            expiresAt: now.addingTimeInterval(TimeInterval(settings.expiresIn)), interval: settings.interval ?? 5
        )
        var answer: [String: Any] = ["auth_req_id": id, "expires_in": settings.expiresIn]
        answer["interval"] = settings.interval
        return .json(answer, noStore: true)
    }

    func pendingBackchannelLogins() -> [TestProvider.BackchannelRequest] {
        backchannelRequests.values.filter { $0.approved == nil && !$0.spent && $0.expiresAt > now }.sorted { $0.expiresAt < $1.expiresAt }.map(\.request)
    }

    func decideBackchannel(loginHint: String, approve: Bool) -> Bool {
        guard let (id, _) = backchannelRequests.first(where: { $0.value.request.loginHint == loginHint && $0.value.approved == nil && !$0.value.spent && $0.value.expiresAt > now })
        else { return false }
        backchannelRequests[id]?.approved = approve
        return true
    }

    /// `grant_type=urn:openid:params:grant-type:ciba` (CIBA Core §10, §11): pending, slow_down,
    /// denied, expired, or the tokens (with an ID token, and `acr` the user's), once.
    func pollBackchannel(_ id: String, client: TestProvider.Client, jkt: String?, resource: String?) throws(OAuthError) -> IssuedTokens {
        guard let record = backchannelRequests[id], record.clientID == client.id, !record.spent else {
            throw .invalidGrant("The auth_req_id is unknown, used, or another client's.")
        }
        defer { backchannelRequests[id]?.lastPoll = now }
        guard record.expiresAt > now else { throw OAuthError(code: "expired_token", description: "The backchannel login has expired.") }
        if configuration.ciba.enforcesInterval, let last = record.lastPoll, now.timeIntervalSince(last) < TimeInterval(record.interval) - 0.05 {
            backchannelRequests[id]?.interval = record.interval + 5
            throw OAuthError(code: "slow_down", description: "Polled sooner than the interval.")
        }
        switch record.approved {
        case nil:
            throw OAuthError(code: "authorization_pending", description: "The user has not approved yet.")
        case false?:
            backchannelRequests[id]?.spent = true
            throw OAuthError(code: "access_denied", description: "The user refused the backchannel login.")
        case true?:
            backchannelRequests[id]?.spent = true
            let familyID = try Self.randomToken()
            families[familyID] = TokenFamily(clientID: client.id, user: user, authTime: now, scope: record.request.scope, resource: resource)
            return try issueTokens(familyID: familyID, scope: record.request.scope, nonce: nil, includeRefreshToken: true, jkt: jkt, audience: resource)
        }
    }
}
