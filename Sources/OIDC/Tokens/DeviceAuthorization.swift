public import Foundation
internal import Logging

/// A device authorization (RFC 8628 §3.2): what the user must enter where, and the device code the
/// client polls with. Made by ``TokenClient/requestDeviceAuthorization(scopes:parameters:pkce:)``.
///
/// Read leniently, as providers differ: numbers sent as strings are accepted, and Google's
/// `verification_url` stands for a missing `verification_uri`; a missing `interval` means 5 s.
public struct DeviceAuthorization: Sendable {
    /// `device_code`: the client's secret handle on the login; never shown.
    public let deviceCode: Secret
    /// `user_code`: what the user enters at ``verificationURI``.
    public let userCode: String
    /// `verification_uri`: where the user goes, on any device.
    public let verificationURI: URL
    /// `verification_uri_complete`: the same with the code in it, for a link or a QR code.
    public let verificationURIComplete: URL?
    /// When the codes expire: `expires_in` after the answer came.
    public let expiresAt: Date
    /// How long to wait between polls: `interval`, 5 s when the provider says nothing.
    public let interval: Duration
    /// The scope values asked for.
    public let scopes: [String]
    /// The PKCE verifier of the request, sent again with every poll.
    let codeVerifier: Secret?

    /// Reads a device authorization response received at `receivedAt`.
    ///
    /// - Throws: ``OIDCError/Code/malformedResponse`` for a body that is not a JSON object, without a
    ///   `device_code`, `user_code`, `verification_uri` (or `verification_url`) or a positive
    ///   `expires_in`, with a URI that is not an absolute https (or loopback http) URL, or with an
    ///   `interval` that is not a positive number of seconds.
    package init(answer json: [UInt8], receivedAt: Date, scopes: [String] = []) throws(OIDCError) {
        try self.init(json: json, receivedAt: receivedAt, scopes: scopes, codeVerifier: nil)
    }

    init(json: [UInt8], receivedAt: Date, scopes: [String], codeVerifier: Secret?) throws(OIDCError) {
        let object: [String: JSONValue]
        do { object = try StrictJSONParser.parseObject(json) } catch {
            throw OIDCError(.malformedResponse, "The device authorization answer is not a valid JSON object (\(error)).")
        }
        let members = JSONObjectReader(object, document: "The device authorization answer")
        func url(_ text: String?, _ name: String) throws(OIDCError) -> URL? {
            guard let text else { return nil }
            // Shown on terminals: a control character or a space is no part of a URI (RFC 3986), and
            // Foundation would quietly percent-encode it.
            guard !text.unicodeScalars.contains(where: { $0.properties.generalCategory == .control || $0.properties.isWhitespace }),
                let url = URL(string: text)
            else { throw OIDCError(.malformedResponse, "The device authorization answer's '\(name)' is not a URL.") }
            do { try EndpointURLPolicy.validate(url, role: name) } catch {
                throw OIDCError(.malformedResponse, "The device authorization answer's '\(name)' is not usable: \(error.message)")
            }
            return url
        }
        guard let deviceCode = try members.nonEmptyString("device_code"), let userCode = try members.nonEmptyString("user_code") else {
            throw OIDCError(.malformedResponse, "The device authorization answer has no device_code or user_code (RFC 8628 §3.2).")
        }
        // Shown verbatim on a terminal, and typed by a person: no control, format (bidi override,
        // zero width) or separator character may pass (RFC 8628 §5.4, display spoofing).
        guard userCode.count <= 256, !userCode.unicodeScalars.contains(where: UntrustedText.isUnsafe) else {
            throw OIDCError(.malformedResponse, "The device authorization answer's user_code is not text a person can read and type.")
        }
        var verificationText = try members.nonEmptyString("verification_uri")
        if verificationText == nil { verificationText = try members.nonEmptyString("verification_url") }  // Google's name
        guard let verification = try url(verificationText, "verification_uri") else {
            throw OIDCError(.malformedResponse, "The device authorization answer has no verification_uri (RFC 8628 §3.2).")
        }
        guard let expiresIn = try members.seconds("expires_in"), expiresIn > 0, expiresIn < 86_400 * 365 else {
            throw OIDCError(.malformedResponse, "The device authorization answer has no positive expires_in (RFC 8628 §3.2).")
        }
        let interval = try members.seconds("interval") ?? 5
        guard interval > 0, interval <= 3600 else {
            throw OIDCError(
                .malformedResponse,
                "The device authorization answer's interval is \(interval) s; it must be a positive number of seconds (RFC 8628 §3.2).")
        }
        self.deviceCode = Secret(deviceCode)
        self.userCode = userCode
        self.verificationURI = verification
        self.verificationURIComplete = try url(try members.nonEmptyString("verification_uri_complete"), "verification_uri_complete")
        self.expiresAt = receivedAt.addingTimeInterval(expiresIn)
        self.interval = .milliseconds(Int64((interval * 1000).rounded(.up)))
        self.scopes = scopes
        self.codeVerifier = codeVerifier
    }
}

/// One answer of the token endpoint to a device poll (RFC 8628 §3.5). `retryAfter` is the answer's
/// `Retry-After` (seconds or an HTTP date), when it has one: the next poll waits at least that long.
public enum DevicePoll: Sendable {
    /// The user approved: the tokens.
    case tokens(TokenSet)
    /// `authorization_pending`: not yet; poll again after the interval.
    case pending(retryAfter: Duration? = nil)
    /// `slow_down`: poll less often: 5 s more from now on, or the provider's new interval when it
    /// sends one.
    case slowDown(interval: Duration?, retryAfter: Duration? = nil)
}

extension TokenClient {
    /// RFC 8628's grant type for the device code.
    static let deviceCodeGrant = "urn:ietf:params:oauth:grant-type:device_code"

    /// Starts a device login (RFC 8628 §3.1): the device authorization request, authenticated as
    /// the client, with PKCE S256 when `pkce` is given (Keycloak can require it).
    ///
    /// - Throws: ``OIDCError/Code/invalidArgument`` when the provider has no device authorization
    ///   endpoint; ``OIDCError/Code/malformedResponse`` for an answer that is not a JSON object,
    ///   lacks `device_code`, `user_code`, `verification_uri` (or `verification_url`) or a positive
    ///   `expires_in`, has a URI that is not an absolute https (or loopback http) URL, or an
    ///   `interval` that is not a positive number of seconds; as ``refresh(_:scopes:)`` otherwise.
    public func requestDeviceAuthorization(scopes: [String], parameters: [OAuthParameter] = [], pkce: PKCE? = nil) async throws(OIDCError)
        -> DeviceAuthorization
    {
        let url = try endpoint(provider.deviceAuthorizationEndpoint, "device authorization endpoint")
        if let reserved = parameters.first(where: { Self.reservedGrantParameters.contains($0.name) || $0.name.hasPrefix("code_challenge") }) {
            throw .invalidArgument("The parameter '\(UntrustedText.sanitized(reserved.name, limit: 64))' is set by the library.")
        }
        var form = parameters
        if !scopes.isEmpty { form.append(OAuthParameter("scope", try AuthorizationRequest.scopeValue(scopes))) }
        if let pkce { form += [OAuthParameter("code_challenge", pkce.challenge), OAuthParameter("code_challenge_method", pkce.method)] }
        let authorization = try await post(form, .deviceAuthorization, to: url) { [now] (response: HTTPResponse) throws(OIDCError) -> DeviceAuthorization in
            try DeviceAuthorization(json: response.body, receivedAt: now(), scopes: scopes, codeVerifier: pkce?.verifier)
        }
        logger.debug(
            "device authorization issued",
            metadata: ["expires_in": .seconds(authorization.expiresAt.timeIntervalSince(now())), "interval_s": .seconds(authorization.interval.timeInterval)]
        )
        return authorization
    }

    /// Polls the token endpoint once for `authorization` (RFC 8628 §3.4).
    ///
    /// - Throws: ``OIDCError/Code/providerError`` for `access_denied`, `expired_token` and every
    ///   other refusal; transient errors (`serverError` with the context's `retryAfter`,
    ///   `networkFailure`, `timedOut`) as they come.
    public func pollDeviceToken(_ authorization: DeviceAuthorization) async throws(OIDCError) -> DevicePoll {
        var form = [OAuthParameter("grant_type", Self.deviceCodeGrant), OAuthParameter("device_code", authorization.deviceCode.revealedValue)]
        if let verifier = authorization.codeVerifier { form.append(OAuthParameter("code_verifier", verifier.revealedValue)) }
        let url = try endpoint(provider.tokenEndpoint, "token endpoint")
        let now = now()
        // A pending or slow_down answer is a success to the call stages: the poll did what it should.
        return try await post(form, .grant(.deviceCode), to: url, passing: { Self.waiting(in: $0, now: now) != nil }) {
            [self] (response: HTTPResponse) throws(OIDCError) -> DevicePoll in
            if let waiting = Self.waiting(in: response, now: now) { return waiting }
            return .tokens(try tokens(from: response, requestedScopes: authorization.scopes, grantType: Self.deviceCodeGrant))
        }
    }

    /// What a poll's refusal says about waiting (RFC 8628 §3.5): `authorization_pending`, or
    /// `slow_down` with the provider's new `interval` if it gives a sane one; `nil` for anything else.
    static func waiting(in response: HTTPResponse, now: Date) -> DevicePoll? {
        guard response.status == 400 || response.status == 401, let object = try? StrictJSONParser.parseObject(response.body) else { return nil }
        let retryAfter = response.headers["Retry-After"].flatMap { RetryAfter.duration($0, now: now) }
        switch object["error"]?.stringValue {
        case "authorization_pending":
            return .pending(retryAfter: retryAfter)
        case "slow_down":
            let seconds = try? JSONObjectReader(object, document: "The slow_down answer").seconds("interval")
            return .slowDown(
                interval: seconds.flatMap { $0 > 0 && $0 <= 3600 ? .milliseconds(Int64($0 * 1000)) : nil }, retryAfter: retryAfter)
        default:
            return nil
        }
    }
}
