import ArgumentParser
import Foundation
import OIDC

extension LoginFlow {
    /// A backchannel login (OpenID CIBA Core 1.0): the request at the provider's
    /// `backchannel_authentication_endpoint` with the client's authentication, `--login-hint` naming
    /// whom to ask and `--binding-message` what their device shows; then, in poll mode, the token
    /// endpoint asked every interval (`slow_down` adding 5 s) until the user approves or refuses or
    /// the request expires; in ping mode, one token request once the provider's notification with
    /// this login's `client_notification_token` and `auth_req_id` came to `--notification-listen`.
    /// The ID token is verified as a code-flow login's (without a nonce: none is sent); the login is
    /// kept, and `oidc token` refreshes it as any other. The `auth_req_id` is never shown.
    func cibaLogin(_ rp: RelyingParty) async throws -> StoredLogin {
        guard rp.provider.backchannelAuthenticationEndpoint != nil else {
            throw OIDCError(
                .invalidArgument,
                "\(rp.provider.issuer) names no backchannel_authentication_endpoint in its discovery document: it offers no CIBA login. Use another --flow.")
        }
        var request = try CIBALogin.request(profile, bindingMessage: bindingMessage)
        let mode = profile.cibaMode ?? .poll
        var listener: CIBANotificationListener?
        if mode == .ping {
            let token = try BackchannelAuthenticationRequest.newNotificationToken()
            request.clientNotificationToken = token
            let started = try await CIBANotificationListener.start(profile.notificationListen ?? "127.0.0.1:0", token: token)
            Console.error("oidc: listening for the provider's notification at \(started.url) (the client's backchannel_client_notification_endpoint)")
            listener = started
        }
        do {
            let stored = try await approvedLogin(rp, request: request, listener: listener)
            await listener?.shutdown()
            return stored
        } catch {
            await listener?.shutdown()
            throw error
        }
    }

    private func approvedLogin(_ rp: RelyingParty, request: BackchannelAuthenticationRequest, listener: CIBANotificationListener?) async throws
        -> StoredLogin
    {
        var login = try await rp.backchannelLogin(request)
        let limit = timeoutGiven ? timeout : nil
        login.timeout = limit
        login.onProgress = { progress in
            if case .retrying(let error, let after) = progress {
                Console.error("oidc: \(error.message) Trying again in \(after.components.seconds) s.")
            }
        }
        let now = CLIClock.now()
        let deadline = min(login.expiresAt, limit.map { now.addingTimeInterval(TimeInterval($0.components.seconds)) } ?? .distantFuture)
        Console.error("oidc: \(CIBALogin.prompt(request, issuer: rp.provider.issuer, waits: deadline.timeIntervalSince(now), until: deadline))")
        var stored: StoredLogin
        if let listener {
            try await listener.waitForNotification(of: login, until: deadline, timeoutGiven: limit != nil && deadline < login.expiresAt)
            stored = try await login.completeAfterNotification()
        } else {
            stored = try await login.waitForLogin()
        }
        // A resource's login: its refreshes carry the same resource (RFC 8707).
        if stored.resource == nil { stored.resource = rp.tokenClient.resource }
        stored.attributes.merge(attributes) { _, profile in profile }
        return try await rp.save(stored, in: keychain, as: key)
    }
}

/// What `oidc login --flow ciba` checks and shows.
enum CIBALogin {
    /// `--flow ciba` needs a client that can authenticate (a secret or a private key), and
    /// `--login-hint`; the hint and `--binding-message` must be plain text (refused before anything
    /// is sent); ping mode needs `--notification-listen`. `--binding-message` goes with this flow only.
    static func check(_ profile: Profile, bindingMessage: String?, given: (cibaMode: Bool, notificationListen: Bool) = (false, false)) throws {
        guard profile.flow == .ciba else {
            if bindingMessage != nil { throw ValidationError("--binding-message goes with --flow ciba") }
            if given.cibaMode { throw ValidationError("--ciba-mode goes with --flow ciba") }
            if given.notificationListen { throw ValidationError("--notification-listen goes with --flow ciba --ciba-mode ping") }
            return
        }
        guard profile.clientID != nil else { throw ValidationError("--flow ciba needs --client-id") }
        guard profile.clientSecretFile != nil || profile.privateKeyFile != nil || profile.clientCertificateFile != nil else {
            throw ValidationError(
                "--flow ciba needs a confidential client (CIBA Core §7.1): give --client-secret-file FILE, or --private-key-file FILE (private_key_jwt), or a client certificate")
        }
        guard profile.loginHint != nil else {
            throw ValidationError("--flow ciba needs --login-hint HINT: whom the provider asks to approve (an e-mail address, a user name it knows)")
        }
        if profile.cibaMode == .ping, profile.notificationListen == nil {
            throw ValidationError(
                "--ciba-mode ping needs --notification-listen 127.0.0.1:PORT: where the provider's notification comes (the client's registered backchannel_client_notification_endpoint)")
        }
        do throws(OIDCError) { try request(profile, bindingMessage: bindingMessage).validate() } catch {
            throw ValidationError(error.message)
        }
    }

    /// The backchannel request the profile and `--binding-message` make.
    static func request(_ profile: Profile, bindingMessage: String?) throws(OIDCError) -> BackchannelAuthenticationRequest {
        guard let hint = profile.loginHint else { throw OIDCError(.invalidArgument, "--flow ciba needs --login-hint HINT.") }
        let acr = profile.acrValues.map { $0.split(separator: " ").map(String.init) }
        return BackchannelAuthenticationRequest(
            loginHint: hint, bindingMessage: bindingMessage, acrValues: acr, scopes: profile.scopes, parameters: profile.parameters)
    }

    /// What the user is told while the login waits: whose device, the binding message to look for,
    /// and how long it waits (never the `auth_req_id`).
    static func prompt(_ request: BackchannelAuthenticationRequest, issuer: String, waits seconds: TimeInterval, until deadline: Date) -> String {
        let message = request.bindingMessage.map { "; it shows \"\($0)\"" } ?? ""
        return "approve the sign-in to \(issuer) on the device of \(UntrustedText.sanitized(request.loginHint, limit: 200))\(message). "
            + "Waiting \(Int(max(0, seconds).rounded())) s, until \(ExecCredential.rfc3339(deadline)) (Ctrl-C to cancel)"
    }
}
