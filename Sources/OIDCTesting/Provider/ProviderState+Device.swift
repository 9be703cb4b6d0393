internal import Foundation
internal import OIDC

/// A device code waiting for its user (RFC 8628).
struct DeviceCodeRecord: Sendable {
    var clientID: String
    var userCode: String
    var scope: String
    var codeChallenge: String?
    var expiresAt: Date
    var interval: Int?
    var lastPoll: Date?
    /// `nil` while pending; then approved or denied.
    var approved: Bool?
    var spent = false
}

extension ProviderState {
    /// `/device_authorization`: a device code and a user code for `client`.
    func authorizeDevice(client: TestProvider.Client, scope: String, codeChallenge: String?) throws(OAuthError) -> ProviderResponse {
        let flow = configuration.deviceFlow
        let deviceCode = try Self.randomToken()
        let userCode = try Self.userCode()
        deviceCodes[deviceCode] = DeviceCodeRecord(
            clientID: client.id, userCode: userCode, scope: scope, codeChallenge: codeChallenge,
            expiresAt: now.addingTimeInterval(TimeInterval(flow.expiresIn)), interval: flow.interval
        )
        var answer: [String: Any] = [
            "device_code": deviceCode, "user_code": userCode, "verification_uri": issuer + ProviderPaths.deviceVerification,
            "verification_uri_complete": issuer + ProviderPaths.deviceVerification + "?user_code=" + userCode, "expires_in": flow.expiresIn,
        ]
        answer["interval"] = flow.interval
        return .json(answer, noStore: true)
    }

    /// Scripts the answers of the next polls.
    func scriptDevicePolls(_ outcomes: [TestProvider.DevicePollOutcome]) { devicePollScript += outcomes }

    /// The user's decision on the pending login of `userCode`.
    func decideDevice(userCode: String, approve: Bool) -> Bool {
        guard let (code, record) = deviceCodes.first(where: { $0.value.userCode == userCode && $0.value.approved == nil && !$0.value.spent }),
            record.expiresAt > now
        else { return false }
        deviceCodes[code]?.approved = approve
        return true
    }

    /// The user codes of pending, unexpired device logins, oldest first.
    func pendingDeviceUserCodes() -> [String] {
        deviceCodes.values.filter { $0.approved == nil && !$0.spent && $0.expiresAt > now }
            .sorted { $0.expiresAt < $1.expiresAt }.map(\.userCode)
    }

    /// `grant_type=urn:ietf:params:oauth:grant-type:device_code` (RFC 8628 §3.4, §3.5).
    func pollDevice(
        _ deviceCode: String, client: TestProvider.Client, codeVerifier: String?, jkt: String? = nil, resource: String? = nil
    ) throws(OAuthError) -> IssuedTokens {
        devicePollTimes.append(Date())
        guard var record = deviceCodes[deviceCode], record.clientID == client.id, !record.spent else {
            throw .invalidGrant("The device code is unknown, used, or another client's.")
        }
        defer { deviceCodes[deviceCode]?.lastPoll = now }
        if let challenge = record.codeChallenge {
            guard let codeVerifier, let computed = try? PKCE(verifier: codeVerifier).challenge, ConstantTime.equals(computed, challenge) else {
                throw .invalidGrant("code_verifier does not match the code_challenge of the device authorization.")
            }
        }
        if !devicePollScript.isEmpty {
            switch devicePollScript.removeFirst() {
            case .pending(let retryAfter):
                var error = OAuthError(code: "authorization_pending", description: "Nobody has approved yet.")
                error.retryAfter = retryAfter
                throw error
            case .slowDown(let interval):
                deviceCodes[deviceCode]?.interval = interval ?? (record.interval ?? 5) + 5
                var error = OAuthError(code: "slow_down", description: "Poll less often.")
                error.interval = interval
                throw error
            case .approve: record.approved = true
            case .deny: record.approved = false
            case .expire: record.expiresAt = now
            }
        }
        guard record.expiresAt > now else { throw OAuthError(code: "expired_token", description: "The device code has expired.") }
        if configuration.deviceFlow.enforcesInterval, let last = record.lastPoll,
            now.timeIntervalSince(last) < TimeInterval(record.interval ?? 5) - 0.05
        {
            deviceCodes[deviceCode]?.interval = (record.interval ?? 5) + 5
            throw OAuthError(code: "slow_down", description: "Polled sooner than the interval.")
        }
        switch record.approved {
        case nil:
            throw OAuthError(code: "authorization_pending", description: "Nobody has approved yet.")
        case false?:
            deviceCodes[deviceCode]?.spent = true
            throw OAuthError(code: "access_denied", description: "The user refused the device login.")
        case true?:
            deviceCodes[deviceCode]?.spent = true
            let familyID = try Self.randomToken()
            families[familyID] = TokenFamily(clientID: client.id, user: user, authTime: now, scope: record.scope, resource: resource)
            return try issueTokens(
                familyID: familyID, scope: record.scope, nonce: nil, includeRefreshToken: true, jkt: jkt,
                includeIDToken: configuration.deviceFlow.issuesIDTokens, audience: resource
            )
        }
    }

    /// `XXXX-XXXX` from an alphabet without vowels or look-alikes (RFC 8628 §6.1).
    static func userCode() throws(OAuthError) -> String {
        let alphabet = Array("BCDFGHJKLMNPQRSTVWXZ")
        let bytes: [UInt8]
        do { bytes = try LibCrypto.randomBytes(count: 8) } catch {
            throw OAuthError(code: "server_error", description: "The provider could not draw random bytes.", status: 500)
        }
        let letters = bytes.map { alphabet[Int($0) % alphabet.count] }
        return String(letters[0..<4]) + "-" + String(letters[4..<8])
    }
}
