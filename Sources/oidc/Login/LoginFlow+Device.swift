import Foundation
import OIDC

extension LoginFlow {
    /// The device flow (RFC 8628): the codes requested, the page and the code shown on stderr (and
    /// opened in the browser a user named, and drawn as a QR code with `--qr`), the token endpoint
    /// polled until the user approves, the ID token verified, the login kept.
    ///
    /// Waits until the codes expire, or `--timeout` when given, whichever comes first (exit 3).
    func deviceLogin(_ rp: RelyingParty) async throws -> Outcome {
        guard rp.provider.deviceAuthorizationEndpoint != nil else {
            throw OIDCError(
                .invalidArgument,
                "\(rp.provider.issuer) names no device authorization endpoint in its discovery document: give --device-authorization-endpoint URL, or use --flow browser."
            )
        }
        // A missing libqrencode is found before the provider is asked for codes.
        if qr { _ = try QRCode(encoding: rp.provider.issuer) }
        var login = try await rp.deviceLogin(scopes: scopes, parameters: profile.parameters)
        let prompt = DevicePrompt(
            issuer: rp.provider.issuer, userCode: login.userCode, verificationURI: login.verificationURI,
            verificationURIComplete: login.verificationURIComplete, expiresAt: login.expiresAt,
            qrCode: try qr ? QRCode(encoding: (login.verificationURIComplete ?? login.verificationURI).absoluteString) : nil
        )
        prompt.show()
        let link = login.verificationURIComplete ?? login.verificationURI
        let opened = await openNamedBrowser(link)
        let showsCountdown = countdown
        login.onProgress = { progress in
            if case .retrying(let error, let after) = progress {
                Console.error("\(showsCountdown ? "\r\u{1B}[K" : "")oidc: \(error.message) Trying again in \(after.components.seconds) s.")
            }
        }
        let approved = CallbackClock()
        let verified: VerifiedLogin
        do { verified = try await waitForApproval(login, approved: approved, countdown: showsCountdown ? prompt : nil) } catch {
            await opened?.loginEnded(link)
            throw error
        }
        // The browser's private page (the link) goes as the wait ends, however it ends.
        await opened?.loginEnded(link)
        return try await keep(verified, rp, since: approved)
    }

    /// Polls until the user approves, while `countdown` counts down and `--timeout` (when given) runs.
    private func waitForApproval(_ login: DeviceLogin, approved: CallbackClock, countdown: DevicePrompt?) async throws -> VerifiedLogin {
        let limit = timeoutGiven ? timeout : nil
        return try await withThrowingTaskGroup(of: VerifiedLogin?.self) { group in
            group.addTask {
                let verified = try await login.waitForTokens()
                approved.mark()
                return verified
            }
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
