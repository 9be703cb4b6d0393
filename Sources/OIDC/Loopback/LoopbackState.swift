internal import Foundation
internal import Logging
internal import NIOCore
internal import NIOHTTP1

/// The shared, mutable part of a ``LoopbackRedirectListener``: whether a login is waiting, how it
/// ended, and the open connections. Connection handlers (on the event loop) and the waiting task read
/// and change it; every access holds the lock, never across a suspension and never while resuming
/// the waiting task, hence `@unchecked Sendable`.
final class LoopbackState: @unchecked Sendable {
    /// Where the listener is in its one login.
    private enum Phase {
        /// Bound; no wait has started.
        case ready
        /// ``LoopbackRedirectListener/waitForAuthorization(_:timeout:)`` is waiting for this request's callback.
        case waiting(request: AuthorizationRequest, location: String)
        /// The login has an outcome (a callback, a timeout, a cancellation, a close).
        case finished
    }

    /// Longest request target served; longer ones get 414.
    static let maximumTargetLength = 8 * 1024

    let callbackPath: String
    /// `/<128 random bits>`: the start URL's path. `/` itself reveals nothing, so another local
    /// process that finds the port cannot read the authorization URL (its state) from it.
    let startPath: String
    /// The start URL redirects once; afterwards it answers 410, so a copy seen later is worthless.
    private var startServed = false
    let connections: LoopbackConnections
    private let lock = NSLock()
    private var phase = Phase.ready
    /// Whether ``LoopbackRedirectListener/waitForAuthorization(_:timeout:)`` has started.
    private var awaited = false
    /// `host:port` values a `Host` field may carry, lowercased; set once the ports are known.
    private var allowedHosts: Set<String> = []
    private var outcome: Result<AuthorizationResponse, OIDCError>?
    private var continuation: CheckedContinuation<Void, Never>?
    private var closing: Task<Void, Never>?
    /// Never given a query or the start path: see ``LoopbackRequestTarget/loggablePath(startPath:)``.
    let logger: Logger

    init(callbackPath: String, startPath: String, maximumConnections: Int, logger: Logger) {
        self.callbackPath = callbackPath
        self.startPath = startPath
        self.connections = LoopbackConnections(maximum: maximumConnections)
        self.logger = logger
    }

    func allowHosts(_ hosts: Set<String>) {
        lock.withLock { allowedHosts = Set(hosts.map { $0.lowercased() }) }
    }

    /// The one closing task, made by `make` on the first call.
    func closingTask(_ make: () -> Task<Void, Never>) -> Task<Void, Never> {
        lock.withLock {
            if let closing { return closing }
            let task = make()
            closing = task
            return task
        }
    }

    var hasStartedClosing: Bool { lock.withLock { closing != nil } }

    /// Whether a ``LoopbackRedirectListener/waitForAuthorization(_:timeout:)`` has begun.
    var isAwaited: Bool { lock.withLock { awaited } }

    /// Whether no wait has started and nothing is closing: a wait could still begin.
    var isReady: Bool {
        lock.withLock {
            guard case .ready = phase else { return false }
            return closing == nil
        }
    }

    // MARK: The wait

    /// Starts serving `request` (``LoopbackRedirectListener/serve(_:)``), or starts the one wait for
    /// it (`awaiting`); serving the same request again, or waiting for the request being served, is
    /// allowed once.
    ///
    /// - Throws: ``OIDCError/Code/invalidArgument`` when another request is served, a wait has
    ///   already started, or the listener is closed.
    func beginWait(for request: AuthorizationRequest, location: String, awaiting: Bool) throws(OIDCError) {
        let started = lock.withLock { () -> Bool in
            guard closing == nil, !awaited else { return false }
            switch phase {
            case .ready:
                phase = .waiting(request: request, location: location)
            case .waiting(let served, _):
                guard served.state == request.state, served.redirectURI == request.redirectURI else { return false }
            case .finished:
                // Only a served request's callback finishes before the wait: the wait takes its outcome.
                guard awaiting, outcome != nil else { return false }
            }
            if awaiting { awaited = true }
            return true
        }
        guard started else {
            throw .invalidArgument(
                "This loopback listener is already used for another login, or closed; start a new listener for each login.")
        }
    }

    /// Suspends until ``finish(_:)`` has been called (at once if it already has).
    func waitForOutcome() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let ready = lock.withLock { () -> Bool in
                if outcome != nil { return true }
                self.continuation = continuation
                return false
            }
            if ready { continuation.resume() }
        }
    }

    /// Records the login's outcome if it has none yet and wakes the waiting task.
    /// - Returns: whether this call decided the outcome.
    @discardableResult
    func finish(_ result: Result<AuthorizationResponse, OIDCError>) -> Bool {
        let (decided, waiting) = lock.withLock { () -> (Bool, CheckedContinuation<Void, Never>?) in
            guard outcome == nil else { return (false, nil) }
            outcome = result
            phase = .finished
            defer { continuation = nil }
            return (true, continuation)
        }
        waiting?.resume()
        return decided
    }

    var result: Result<AuthorizationResponse, OIDCError>? { lock.withLock { outcome } }

    // MARK: Requests

    /// The answer to one request head; a valid callback also decides the login's outcome.
    func respond(to head: HTTPRequestHead) -> LoopbackResponse {
        let target = LoopbackRequestTarget(head.uri)
        let response = answer(head, target: target)
        logger.trace(
            "loopback request answered",
            metadata: [
                "method": .string(head.method.rawValue), "path": .string(target.loggablePath(startPath: startPath)),
                "status": .int(response.status),
            ]
        )
        return response
    }

    private func answer(_ head: HTTPRequestHead, target: LoopbackRequestTarget) -> LoopbackResponse {
        guard head.uri.utf8.count <= Self.maximumTargetLength else { return LoopbackPage.uriTooLong() }
        guard head.version == .http1_1 else { return LoopbackPage.versionNotSupported() }
        let hostFields = head.headers["Host"]
        let allowed = lock.withLock { allowedHosts }
        guard hostFields.count == 1, let host = hostFields.first, allowed.contains(host.lowercased()) else {
            logger.notice(
                "loopback request refused: Host is not the listener's", metadata: ["host": .untrusted(hostFields.joined(separator: ","))]
            )
            return LoopbackPage.badRequest()  // DNS rebinding: another name pointing at 127.0.0.1
        }
        if let authority = target.authority, !allowed.contains(authority) {
            logger.notice("loopback request refused: its absolute-form target names another host", metadata: ["host": .untrusted(authority)])
            return LoopbackPage.badRequest()
        }
        guard head.method == .GET || head.method == .HEAD else { return LoopbackPage.methodNotAllowed() }
        let lengths = head.headers["Content-Length"]
        guard head.headers["Transfer-Encoding"].isEmpty, lengths.allSatisfy({ $0 == "0" }) else {
            return LoopbackPage.badRequest()  // GET and HEAD carry no body here
        }

        let path = target.path
        if path == startPath {
            // Only a GET uses the one-time link: a HEAD (a link checker) would reveal it without opening it.
            guard head.method == .GET else { return LoopbackPage.methodNotAllowed(allow: "GET") }
            return lock.withLock { () -> LoopbackResponse in
                guard case .waiting(_, let location) = phase else { return LoopbackPage.notWaiting() }
                guard !startServed else { return LoopbackPage.startUsed() }
                startServed = true
                logger.debug("start URL opened; redirecting the browser to the provider")
                return LoopbackPage.redirect(to: location)
            }
        }
        guard path == callbackPath else { return LoopbackPage.notFound() }
        return callback(target: target, host: host.lowercased())
    }

    /// The callback path: requests that are not this login's are answered and ignored; the first one
    /// with the right state ends the wait, whatever else it carries.
    private func callback(target: LoopbackRequestTarget, host: String) -> LoopbackResponse {
        let request = lock.withLock { () -> AuthorizationRequest? in
            if case .waiting(let request, _) = phase { return request }
            return nil
        }
        guard let request else { return LoopbackPage.notWaiting() }
        guard Self.carriesState(of: request, query: target.query) else {
            logger.notice("callback without this login's state ignored (missing, repeated or wrong)")
            return LoopbackPage.foreign()
        }

        let result: Result<AuthorizationResponse, OIDCError>
        if let url = URL(string: "http://\(host)\(target.pathAndQuery)") {
            result = Result { () throws(OIDCError) in try AuthorizationResponse(callbackURL: url, request: request) }
        } else {
            result = .failure(OIDCError(.malformedURL, "The callback URL is malformed; the provider's answer cannot be read."))
        }
        guard finish(result) else { return LoopbackPage.notWaiting() }
        switch result {
        case .success:
            logger.debug("callback received with a code")
            return LoopbackPage.success()
        case .failure(let error):
            logger.debug("callback received with an error", metadata: .failure(error))
            return LoopbackPage.failure(error)
        }
    }

    /// Whether the query is readable and has exactly one `state`, equal to the request's (constant time).
    private static func carriesState(of request: AuthorizationRequest, query: Substring) -> Bool {
        guard let parameters = try? FormEncoding.decode(query, allowDuplicates: true) else { return false }
        let states = parameters.filter { $0.name == "state" }
        guard states.count == 1, let state = states.first else { return false }
        return ConstantTime.equals(state.value, request.state)
    }
}
