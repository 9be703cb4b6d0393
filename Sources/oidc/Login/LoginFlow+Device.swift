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
        await openNamedBrowser(login.verificationURIComplete ?? login.verificationURI)
        let showsCountdown = countdown
        login.onProgress = { progress in
            if case .retrying(let error, let after) = progress {
                Console.error("\(showsCountdown ? "\r\u{1B}[K" : "")oidc: \(error.message) Trying again in \(after.components.seconds) s.")
            }
        }
        let approved = CallbackClock()
        let wait = login
        let verified = try await withThrowingTaskGroup(of: VerifiedLogin?.self) { group in
            group.addTask {
                let verified = try await wait.waitForTokens()
                approved.mark()
                return verified
            }
            if showsCountdown { group.addTask { await prompt.countDown(); return nil } }
            if timeoutGiven {
                let limit = timeout
                group.addTask {
                    try await Task.sleep(for: limit)
                    throw OIDCError(
                        .loginTimedOut, "Nobody approved the device login within --timeout \(limit.components.seconds) s; run the login again.")
                }
            }
            defer { group.cancelAll() }
            while let next = try await group.next() {
                if let verified = next { return verified }
            }
            throw CancellationError()
        }
        return try await keep(verified, rp, since: approved)
    }

    /// Opens `url` with the browser the user named (`--browser`, `$BROWSER`), if any: the device
    /// flow's page with the code in it. A browser that fails to start only says so.
    private func openNamedBrowser(_ url: URL) async {
        guard environment.browserNamed, case .system(let command) = browser else { return }
        do { try await SystemBrowser(command: command).open(url) } catch {
            Console.error("oidc: \(error.message) Open the page above yourself.")
        }
    }
}
