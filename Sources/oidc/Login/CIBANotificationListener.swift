import Foundation
import OIDC
import OIDCTesting

/// Where a ping-mode CIBA login (CIBA Core §10.2) hears that the user approved: a loopback HTTP
/// service at `--notification-listen` (the client's registered `backchannel_client_notification_endpoint`,
/// any path). A `POST` with this login's bearer `client_notification_token` and `auth_req_id` is
/// answered 204 and ends the wait, once; anything else is answered (401 for a wrong or missing
/// token, 400 for another body, 405 for another method) and triggers nothing. A flood is bounded
/// by the service's connection limit and an 8 KiB body, and every refusal costs nothing but its
/// answer.
final class CIBANotificationListener: Sendable {
    /// `http://HOST:PORT/`, the port the system chose for port 0.
    let url: String
    private let service: LoopbackHTTPService
    private let inbox: Inbox

    private init(url: String, service: LoopbackHTTPService, inbox: Inbox) {
        self.url = url
        self.service = service
        self.inbox = inbox
    }

    /// Listens at `address` (`127.0.0.1:PORT`, `[::1]:PORT`).
    ///
    /// - Throws: `portInUse` or `invalidArgument` naming the address.
    static func start(_ address: String) async throws -> CIBANotificationListener {
        let endpoint = try LoopbackRedirectListener.Endpoint(parsing: address)
        let host = endpoint.host.contains(":") ? "[\(endpoint.host)]" : endpoint.host
        let inbox = Inbox()
        let service: LoopbackHTTPService
        do {
            service = try await LoopbackHTTPService.start(
                host: endpoint.host, port: endpoint.port, maximumBodySize: BackchannelNotification.bodyLimit,
                connections: HTTPConnectionLimits(maximumConnections: 16)
            ) { request in inbox.answer(request) }
        } catch let error as OIDCError {
            throw OIDCError(error.code, "--notification-listen \(endpoint): \(error.message)", context: error.context)
        }
        return CIBANotificationListener(url: "http://\(host):\(service.port)/", service: service, inbox: inbox)
    }

    /// Returns once the notification of `login` came, answered 204.
    ///
    /// - Throws: `loginTimedOut` at `deadline` (naming `--timeout` when that ended it first);
    ///   `cancelled` when the task is.
    func waitForNotification(of login: BackchannelLogin, until deadline: Date, timeoutGiven: Bool) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await self.inbox.notified(of: login) }
            group.addTask {
                try await Task.sleep(for: .milliseconds(Int64(max(0, deadline.timeIntervalSince(CLIClock.now())) * 1000)))
                throw OIDCError(
                    .loginTimedOut,
                    timeoutGiven
                        ? "No notification came within --timeout: nobody approved the backchannel login in time; run the login again."
                        : "The backchannel login expired before the provider's notification came; run the login again.")
            }
            defer { group.cancelAll() }
            try await group.next()
        }
    }

    /// Stops listening; the open connections end.
    func shutdown() async {
        inbox.close()
        try? await service.shutdown()
    }

    /// The login waited for, and the one waiter its notification resumes.
    private final class Inbox: @unchecked Sendable {
        private let lock = NSLock()
        private var login: BackchannelLogin?
        private var waiter: CheckedContinuation<Void, Never>?
        private var arrived = false

        func notified(of login: BackchannelLogin) async {
            await withTaskCancellationHandler {
                await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                    let now = lock.withLock { () -> Bool in
                        self.login = login
                        if arrived || Task.isCancelled { return true }
                        waiter = continuation
                        return false
                    }
                    if now { continuation.resume() }
                }
            } onCancel: {
                close()
            }
        }

        func close() {
            let waiting = lock.withLock { () -> CheckedContinuation<Void, Never>? in
                defer { waiter = nil }
                return waiter
            }
            waiting?.resume()
        }

        func answer(_ request: LoopbackHTTPService.Request) -> LoopbackHTTPService.Response {
            guard request.method == "POST" else {
                return LoopbackHTTPService.Response(status: 405, headers: [("Allow", "POST")])
            }
            let (verdict, resumed) = lock.withLock { () -> (BackchannelNotification, CheckedContinuation<Void, Never>?) in
                // Before the provider named the request, no notification can be this login's.
                guard let login else { return (.badRequest, nil) }
                let verdict = login.check(notificationAuthorization: request.header("Authorization"), body: request.body)
                guard verdict == .accepted, !arrived else { return (verdict, nil) }
                arrived = true
                defer { waiter = nil }
                return (verdict, waiter)
            }
            resumed?.resume()
            switch verdict {
            case .accepted: return LoopbackHTTPService.Response(status: 204)
            case .unauthorized: return LoopbackHTTPService.Response(status: 401, headers: [("WWW-Authenticate", "Bearer")])
            case .badRequest: return LoopbackHTTPService.Response(status: 400)
            }
        }
    }
}
