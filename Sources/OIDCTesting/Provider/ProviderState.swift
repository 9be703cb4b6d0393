internal import Foundation
internal import OIDC

/// Everything the provider remembers: codes, token families, access tokens, keys, the signed-in
/// user, the clock, request counters and pending faults. One actor, so a code or a refresh token is
/// checked and spent in one step.
actor ProviderState {
    let configuration: TestProvider.Configuration
    /// Set once, right after the server is bound (the port is known only then).
    private(set) var issuer = ""
    var user: TestUser
    var keys: KeyRing
    private var clockAdvance: TimeInterval = 0

    private var requestCounts: [TestProvider.Endpoint: Int] = [:]
    private var grantCounts: [String: Int] = [:]
    private var formRequests: [TestProvider.Endpoint: [[String: String]]] = [:]
    private var faults: [TestProvider.Endpoint: [TestProvider.Fault]] = [:]
    /// Requests that came through an mTLS endpoint alias (RFC 8705 §5), by endpoint.
    var aliasRequestCounts: [TestProvider.Endpoint: Int] = [:]
    /// Tests waiting for a counter to reach a number (`RequestWaiters.swift`).
    var requestWaiters = RequestWaiters()

    var codes: [String: AuthorizationCodeRecord] = [:]
    var pendingLogins: [String: (authorization: ValidatedAuthorization, expiresAt: Date)] = [:]
    /// Pushed authorization requests (RFC 9126) by `request_uri`, each usable once.
    var pushedRequests: [String: (clientID: String, parameters: [OAuthParameter], expiresAt: Date)] = [:]
    var families: [String: TokenFamily] = [:]
    var refreshTokens: [String: RefreshTokenRecord] = [:]
    var accessTokens: [String: AccessTokenRecord] = [:]
    /// ID tokens issued, with their client: `id_token_hint` at the end-session endpoint.
    var issuedIDTokens: [String: String] = [:]
    /// Device codes (RFC 8628) by their value.
    var deviceCodes: [String: DeviceCodeRecord] = [:]
    /// Backchannel logins (CIBA) by `auth_req_id`.
    var backchannelRequests: [String: BackchannelRecord] = [:]
    /// Outcomes the next device polls are answered, in turn.
    var devicePollScript: [TestProvider.DevicePollOutcome] = []
    /// When each device poll came (the real clock).
    var devicePollTimes: [Date] = []
    /// Client assertions' `jti`s seen, by client, each until its assertion expires.
    private var assertionIDs: [String: Date] = [:]
    /// DPoP nonce, accepted proofs' `jti`s and the proofs received (`ProviderState+DPoP.swift`).
    var dpop = DPoPLedger()
    /// Dynamically registered clients (RFC 7591, `ProviderState+Registration.swift`).
    var registrations = RegistrationLedger()

    init(configuration: TestProvider.Configuration, keys: KeyRing) {
        self.configuration = configuration
        self.user = configuration.user
        self.keys = keys
    }

    func setIssuer(_ issuer: String) { self.issuer = issuer }

    // MARK: Clock

    /// The provider's time: real time plus the configured offset plus ``advanceClock(by:)``.
    var now: Date { Date().addingTimeInterval(configuration.clockOffset + clockAdvance) }

    func advanceClock(by seconds: TimeInterval) { clockAdvance += seconds }

    // MARK: Users and keys

    func setUser(_ user: TestUser) { self.user = user }

    func rotateKeys() throws {
        try keys.rotate(retaining: configuration.retainedKeyGenerations)
    }

    /// The JWKS document as JSON bytes.
    func jwksJSON() throws -> [UInt8] {
        Array(try JSONSerialization.data(withJSONObject: try keys.jwks(), options: [.sortedKeys, .withoutEscapingSlashes]))
    }

    // MARK: Counters and faults

    /// Whether `jti` of `client`'s assertion is new: it is then remembered until `expiry`, and
    /// refused as a replay before that (RFC 7523 §3 item 7). Expired ones are forgotten.
    func useAssertionID(_ jti: String, client: String, until expiry: Date) -> Bool {
        let now = self.now
        assertionIDs = assertionIDs.filter { $0.value > now }
        let key = client + " " + jti
        guard assertionIDs[key] == nil else { return false }
        assertionIDs[key] = expiry
        return true
    }

    /// Counts a request (and its grant type at the token endpoint) and hands back the fault to play,
    /// if one is queued for this endpoint.
    func recordRequest(
        _ endpoint: TestProvider.Endpoint, grantType: String?, formParameters: [String: String]? = nil
    ) -> TestProvider.Fault? {
        requestCounts[endpoint, default: 0] += 1
        if let grantType { grantCounts[grantType, default: 0] += 1 }
        if let formParameters { formRequests[endpoint, default: []].append(formParameters) }
        resumeWaiters()
        guard var queue = faults[endpoint], !queue.isEmpty else { return nil }
        let fault = queue.removeFirst()
        faults[endpoint] = queue
        return fault
    }

    func addFaults(_ fault: TestProvider.Fault, count: Int, endpoint: TestProvider.Endpoint) {
        guard count > 0 else { return }
        faults[endpoint, default: []] += Array(repeating: fault, count: count)
    }

    func clearFaults() { faults = [:] }

    func pendingFaultCount(_ endpoint: TestProvider.Endpoint) -> Int { faults[endpoint]?.count ?? 0 }

    func requestCount(_ endpoint: TestProvider.Endpoint) -> Int { requestCounts[endpoint] ?? 0 }

    func grantCount(_ grantType: String) -> Int { grantCounts[grantType] ?? 0 }

    func requestParameters(_ endpoint: TestProvider.Endpoint) -> [[String: String]] { formRequests[endpoint] ?? [] }

    func resetCounters() {
        requestCounts = [:]
        grantCounts = [:]
        formRequests = [:]
        dpop.received = [:]
    }

    // MARK: Authorization

    /// Signs the current user in for `authorization` and returns a fresh code.
    func issueCode(for authorization: ValidatedAuthorization) throws(OAuthError) -> String {
        let familyID = try Self.randomToken()
        families[familyID] = TokenFamily(
            clientID: authorization.client.id, user: user, authTime: now, scope: authorization.scope, resource: authorization.resource,
            authorizationDetails: authorization.authorizationDetails
        )
        let code = try Self.randomToken()
        codes[code] = AuthorizationCodeRecord(
            authorization: authorization, familyID: familyID,
            expiresAt: now.addingTimeInterval(TimeInterval(configuration.authorizationCodeLifetime))
        )
        return code
    }

    /// Keeps a validated request while the login page is shown; the id comes back with the form.
    func parkLogin(_ authorization: ValidatedAuthorization) throws(OAuthError) -> String {
        let id = try Self.randomToken()
        pendingLogins = pendingLogins.filter { $0.value.expiresAt > now }
        pendingLogins[id] = (authorization, now.addingTimeInterval(600))
        return id
    }

    /// The parked request, once.
    func takeLogin(_ id: String) -> ValidatedAuthorization? {
        guard let entry = pendingLogins.removeValue(forKey: id), entry.expiresAt > now else { return nil }
        return entry.authorization
    }

    // MARK: Tokens

    func expireAccessTokens() {
        let past = now.addingTimeInterval(-1)
        for token in accessTokens.keys { accessTokens[token]?.expiresAt = past }
    }

    /// The record of a usable access token: known, not expired, not revoked, its family alive.
    func validAccessToken(_ token: String) -> (record: AccessTokenRecord, user: TestUser)? {
        guard let record = accessTokens[token], !record.revoked, record.expiresAt > now,
            let family = families[record.familyID], !family.revoked
        else { return nil }
        return (record, family.user)
    }

    /// The client an ID token was issued to, for `id_token_hint`.
    func clientOfIDToken(_ token: String) -> String? { issuedIDTokens[token] }

    func revokeFamily(_ familyID: String) {
        families[familyID]?.revoked = true
        for (token, record) in accessTokens where record.familyID == familyID { accessTokens[token]?.revoked = true }
        for (token, record) in refreshTokens where record.familyID == familyID { refreshTokens[token]?.spent = true }
    }

    /// RFC 7009: a live refresh token revokes its family (and so its access tokens), an access token
    /// itself. Tokens that are unknown, spent (already rotated away: no longer valid, §2.2) or of
    /// another client are left alone, as real providers do: revoking a spent refresh token does not
    /// end the login that rotated it.
    func revoke(_ token: String, clientID: String) {
        if let record = refreshTokens[token], let family = families[record.familyID] {
            if family.clientID == clientID, !record.spent { revokeFamily(record.familyID) }
        } else if let record = accessTokens[token], record.clientID == clientID {
            accessTokens[token]?.revoked = true
        }
    }

    static func randomToken() throws(OAuthError) -> String {
        do {
            return try RandomToken.generate(byteCount: 32)
        } catch {
            throw OAuthError(code: "server_error", description: "The provider could not draw random bytes.", status: 500)
        }
    }
}
