import Foundation
import OIDC

extension LoginFlow {
    /// The device flow (RFC 8628): the codes requested, the page and the code shown on stderr (and
    /// opened in the browser a user named, and drawn as a QR code with `--qr`), the token endpoint
    /// polled until the user approves, the ID token verified when the provider sends one (RFC 8628
    /// promises none: without it the login is kept without a subject, marked as a device login, and
    /// `oidc status` says so), the login kept.
    ///
    /// Waits until the codes expire, or `--timeout` when given, whichever comes first (exit 3).
    func deviceLogin(_ rp: RelyingParty) async throws -> StoredLogin {
        guard rp.provider.deviceAuthorizationEndpoint != nil else {
            throw OIDCError(
                .invalidArgument,
                "\(rp.provider.issuer) names no device authorization endpoint in its discovery document: give --device-authorization-endpoint URL, or use --flow browser."
            )
        }
        // A missing libqrencode is found before the provider is asked for codes.
        if qr { _ = try QRCode(encoding: rp.provider.issuer) }
        var login = try await rp.deviceLogin(scopes: scopes, parameters: profile.parameters)
        var prompt = DevicePrompt(
            issuer: rp.provider.issuer, userCode: login.userCode, verificationURI: login.verificationURI,
            verificationURIComplete: login.verificationURIComplete, expiresAt: login.expiresAt,
            qrCode: try qr ? QRCode(encoding: (login.verificationURIComplete ?? login.verificationURI).absoluteString) : nil
        )
        if timeoutGiven {
            // The wait below starts now; shown when it ends before the code expires.
            prompt.timeoutEndsAt = CLIClock.now().addingTimeInterval(TimeInterval(timeout.components.seconds))
            prompt.timeoutSeconds = timeout.components.seconds
        }
        prompt.show()
        let link = login.verificationURIComplete ?? login.verificationURI
        let opened = await openNamedBrowser(link)
        let showsCountdown = countdown
        login.onProgress = { progress in
            if case .retrying(let error, let after) = progress {
                Console.error("\(showsCountdown ? "\r\u{1B}[K" : "")oidc: \(error.message) Trying again in \(after.components.seconds) s.")
            }
        }
        var approved: StoredLogin
        do { approved = try await waitForApproval(login, countdown: showsCountdown ? prompt : nil) } catch {
            await opened?.loginEnded(link)
            throw error
        }
        // The browser's private page (the link) goes as the wait ends, however it ends.
        await opened?.loginEnded(link)
        approved.grant = .deviceCode
        // A resource's login: its refreshes carry the same resource (RFC 8707).
        if approved.resource == nil { approved.resource = rp.tokenClient.resource }
        // The grant in its attributes too, for an earlier oidc that shares the store.
        approved.attributes = attributes.merging(StoredLogin.Grant.deviceCode.legacyAttributes) { $1 }
        return try await rp.save(approved, in: keychain, as: key)
    }

    /// Polls until the user approves, while `countdown` counts down and `--timeout` (when given) runs.
    private func waitForApproval(_ login: DeviceLogin, countdown: DevicePrompt?) async throws -> StoredLogin {
        let limit = timeoutGiven ? timeout : nil
        return try await withThrowingTaskGroup(of: StoredLogin?.self) { group in
            group.addTask { try await login.waitForLogin() }
            if let countdown { group.addTask { await countdown.countDown(); return nil } }
            if let limit {
                group.addTask {
                    try await Task.sleep(for: limit)
                    throw OIDCError(.loginTimedOut, "Nobody approved the device login within --timeout \(limit.components.seconds) s; run the login again.")
                }
            }
            defer { group.cancelAll() }
            while let next = try await group.next() {
                if let verified = next { return verified }
            }
            throw CancellationError()
        }
    }

    /// Opens `url` with the browser the user named (`--browser`, `$BROWSER`), if any: the device
    /// flow's page with the code in it. A browser that fails to start only says so.
    ///
    /// - Returns: the browser, to be told when the login ends; `nil` when none was started.
    private func openNamedBrowser(_ url: URL) async -> SystemBrowser? {
        guard environment.browserNamed, case .system(let command) = browser else { return nil }
        let browser = SystemBrowser(command: command)
        do { try await browser.open(url) } catch {
            Console.error("oidc: \(error.message) Open the page above yourself.")
            return nil
        }
        return browser
    }
}

/// What a device login (RFC 8628) keeps with it: its grant, so that `oidc status` can say why a login
/// has no ID token (the provider's device grant sent none).
enum DeviceGrant {
    static let grant = StoredLogin.Grant.deviceCode.type

    /// Whether `login` came from the device flow.
    static func made(_ login: StoredLogin) -> Bool {
        login.grant?.type == grant
    }

    /// Why `login` has no ID token, when it is a device login whose provider sent none.
    static func missingIDTokenReason(_ login: StoredLogin) -> String? {
        made(login) && login.subject == nil && login.tokens.idToken == nil ? "the provider's device grant sent none" : nil
    }
}
