import Foundation
import OIDC
import OIDCTesting

/// Where a ping-mode CIBA login (CIBA Core §10.2) hears that the user approved: a loopback HTTP
/// service at `--notification-listen` (the client's registered `backchannel_client_notification_endpoint`,
/// any path). A `POST` with this login's bearer `client_notification_token` and its `auth_req_id` is
/// answered 204 and ends the wait, once; anything else is answered (401 for a wrong or missing
/// token, 400 for another body, 405 for another method) and triggers nothing. A notification with
/// the right token that comes before the provider's answer named the request (a fast provider) is
/// kept, and counts once the `auth_req_id` is known. A flood is bounded: 64 connections, each
/// closed when it sends no whole request within 2 s or idles 5 s, and an 8 KiB body.
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

    /// Listens at `address` (`127.0.0.1:PORT`, `[::1]:PORT`) for notifications bearing `token`.
    ///
    /// - Throws: `portInUse` or `invalidArgument` naming the address.
    static func start(_ address: String, token: Secret) async throws -> CIBANotificationListener {
        let endpoint = try LoopbackRedirectListener.Endpoint(parsing: address)
        let host = endpoint.host.contains(":") ? "[\(endpoint.host)]" : endpoint.host
        let inbox = Inbox(token: token)
        let service: LoopbackHTTPService
        do {
            service = try await LoopbackHTTPService.start(
                host: endpoint.host, port: endpoint.port, maximumBodySize: BackchannelNotification.bodyLimit,
                connections: HTTPConnectionLimits(maximumConnections: 64, idleTimeout: .seconds(5), requestHeadTimeout: .seconds(2))
            ) { request in inbox.answer(request) }
        } catch let error as OIDCError {
            throw OIDCError(error.code, "--notification-listen \(endpoint): \(error.message)", context: error.context)
        }
        return CIBANotificationListener(url: "http://\(host):\(service.port)/", service: service, inbox: inbox)
    }

    /// Returns once the notification of `login` came (or had come), answered 204.
    ///
    /// - Throws: `loginTimedOut` at `deadline` (naming `--timeout` when that ended it first);
    ///   `cancelled` when the task is (Ctrl-C): no token request follows either.
    func waitForNotification(of login: BackchannelLogin, until deadline: Date, timeoutGiven: Bool) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                guard await self.inbox.notified(of: login) else {
                    throw OIDCError(.cancelled, "The backchannel login was cancelled while it waited for the provider's notification.")
                }
            }
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

    /// The login waited for, the notifications that came before it was known, and the one waiter
    /// the notification resumes.
    private final class Inbox: @unchecked Sendable {
        /// Notifications with the right token kept before the login was known: a few at most.
        static let earlyLimit = 8

        private let token: Secret
        private let lock = NSLock()
        private var login: BackchannelLogin?
        private var early: [Secret] = []
        private var waiter: CheckedContinuation<Bool, Never>?
        private var arrived = false
        private var closed = false

        init(token: Secret) { self.token = token }

        /// `true` once the notification of `login` came; `false` when the wait was cancelled or
        /// the listener closed first.
        func notified(of login: BackchannelLogin) async -> Bool {
            await withTaskCancellationHandler {
                await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                    let now = lock.withLock { () -> Bool? in
                        self.login = login
                        if early.contains(login.authentication.requestID) { arrived = true }
                        early = []
                        if arrived { return true }
                        if closed || Task.isCancelled { return false }
                        waiter = continuation
                        return nil
                    }
                    if let now { continuation.resume(returning: now) }
                }
            } onCancel: {
                close()
            }
        }

        func close() {
            let waiting = lock.withLock { () -> CheckedContinuation<Bool, Never>? in
                closed = true
                defer { waiter = nil }
                return waiter
            }
            waiting?.resume(returning: false)
        }

        func answer(_ request: LoopbackHTTPService.Request) -> LoopbackHTTPService.Response {
            guard request.method == "POST" else {
                return LoopbackHTTPService.Response(status: 405, headers: [("Allow", "POST")])
            }
            let (verdict, resumed) = lock.withLock { () -> (BackchannelNotification, CheckedContinuation<Bool, Never>?) in
                guard let login else { return (keepEarly(request), nil) }
                let verdict = login.check(notificationAuthorization: request.header("Authorization"), body: request.body)
                guard verdict == .accepted, !arrived else { return (verdict, nil) }
                arrived = true
                defer { waiter = nil }
                return (verdict, waiter)
            }
            resumed?.resume(returning: true)
            switch verdict {
            case .accepted: return LoopbackHTTPService.Response(status: 204)
            case .unauthorized: return LoopbackHTTPService.Response(status: 401, headers: [("WWW-Authenticate", "Bearer")])
            case .badRequest: return LoopbackHTTPService.Response(status: 400)
            }
        }

        /// A notification before the provider named the request: its bearer token checked now, its
        /// `auth_req_id` kept (a few at most) until the login is known. Called under the lock.
        private func keepEarly(_ request: LoopbackHTTPService.Request) -> BackchannelNotification {
            guard BackchannelNotification.bearerToken(request.header("Authorization")) == token else { return .unauthorized }
            guard let id = BackchannelNotification.requestID(in: request.body), early.count < Self.earlyLimit else { return .badRequest }
            early.append(id)
            return .accepted
        }
    }
}
