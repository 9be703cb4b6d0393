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
        /// The first valid callback came after the start URL was opened: its result is held for the
        /// callback grace, in which a request for the start URL aborts the login instead.
        case holding(request: AuthorizationRequest, result: Result<AuthorizationResponse, OIDCError>)
        /// The login has an outcome (a callback, a timeout, a cancellation, a close, an abort).
        case finished
    }

    /// Longest request target served; longer ones get 414.
    static let maximumTargetLength = 8 * 1024

    let callbackPath: String
    /// `/<128 random bits>`: the start URL's path. `/` itself reveals nothing, so another local
    /// process that finds the port cannot read the authorization URL (its state) from it.
    let startPath: String
    /// How long a valid callback is held when the start URL was opened before it.
    let callbackGrace: Duration
    let connections: LoopbackConnections
    /// Where the end of a callback's hold is scheduled.
    private let eventLoop: any EventLoop
    /// The start URL redirects once; a second request for it aborts the login.
    private var startServed = false
    /// Whether the login was aborted by a second request for the start URL.
    private var aborted = false
    private let lock = NSLock()
    private var phase = Phase.ready
    /// Whether ``LoopbackRedirectListener/waitForAuthorization(_:timeout:)`` has started.
    private var awaited = false
    /// `host:port` values a `Host` field may carry, lowercased; set once the ports are known.
    private var allowedHosts: Set<String> = []
    private var outcome: Result<AuthorizationResponse, OIDCError>?
    private var continuation: CheckedContinuation<Void, Never>?
    private var closing: Task<Void, Never>?
    /// How a signed callback (JARM) is verified, when the served request asked for one.
    private var jarm: LoopbackJARMCheck?
    /// The last signed callback (JARM) that failed its verification: the timeout reports it.
    private var lastRefusal: OIDCError?
    /// Answers being made after an asynchronous check (a signed callback's verification); the
    /// listener waits for them before it stops its thread.
    private var deferredAnswers: [Task<Void, Never>] = []
    /// Never given a query or the start path: see ``LoopbackRequestTarget/loggablePath(startPath:)``.
    let logger: Logger

    init(
        callbackPath: String, startPath: String, maximumConnections: Int, callbackGrace: Duration, eventLoop: any EventLoop,
        logger: Logger
    ) {
        self.callbackPath = callbackPath
        self.startPath = startPath
        self.callbackGrace = callbackGrace
        self.connections = LoopbackConnections(maximum: maximumConnections)
        self.eventLoop = eventLoop
        self.logger = logger
    }

    static let reusedError = OIDCError(
        .startURLReused,
        "The sign-in link was opened a second time while this login was being completed: another program on this computer may have opened it first, to sign you in to its own account. The login was aborted before the code was exchanged, so nothing was stored; run the login again."
    )

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

    /// Points the start URL at `location` instead, while `request` is served and the start URL has
    /// not been opened; `false` once it has (or the login ended).
    func replaceLocation(for request: AuthorizationRequest, with location: String) -> Bool {
        lock.withLock {
            guard case .waiting(let served, _) = phase, !startServed, served.state == request.state else { return false }
            phase = .waiting(request: served, location: location)
            return true
        }
    }

    /// Starts serving `request` (``LoopbackRedirectListener/serve(_:)``), or starts the one wait for
    /// it (`awaiting`); serving the same request again, or waiting for the request being served, is
    /// allowed once.
    ///
    /// - Throws: ``OIDCError/Code/invalidArgument`` when another request is served, a wait has
    ///   already started, or the listener is closed.
    func beginWait(for request: AuthorizationRequest, location: String, awaiting: Bool, jarm: LoopbackJARMCheck? = nil) throws(OIDCError) {
        let started = lock.withLock { () -> Bool in
            guard closing == nil, !awaited else { return false }
            switch phase {
            case .ready:
                phase = .waiting(request: request, location: location)
                self.jarm = jarm
            case .waiting(let served, _):
                guard served.state == request.state, served.redirectURI == request.redirectURI else { return false }
            case .holding(let served, _):
                // A served request's callback, held: the wait takes it when the hold ends.
                guard awaiting, served.state == request.state, served.redirectURI == request.redirectURI else { return false }
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

    /// Suspends until the login has an outcome (at once if it already has).
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

    /// Records the login's outcome if it has none yet (a held callback loses to it) and wakes the
    /// waiting task: a cancellation, a close, a dropped listener.
    /// - Returns: whether this call decided the outcome.
    @discardableResult
    func finish(_ result: Result<AuthorizationResponse, OIDCError>) -> Bool {
        let (decided, waiting) = lock.withLock { decideLocked(result) }
        waiting?.resume()
        return decided
    }

    /// Ends the login with `error` when its time is up, unless a valid callback is being held: the
    /// hold is short, and the callback came in time. `error` is told whether the start URL was ever
    /// opened; when a signed callback (JARM) was refused meanwhile, its refusal is the outcome instead.
    func timeOut(_ error: (_ startOpened: Bool) -> OIDCError) {
        let waiting = lock.withLock { () -> CheckedContinuation<Void, Never>? in
            if case .holding = phase { return nil }
            let outcome = lastRefusal.map { refusal in
                OIDCError(
                    refusal.code, refusal.message + " The login waited until its time limit for a signed response that passes; none came.",
                    context: refusal.context
                )
            }
            return decideLocked(.failure(outcome ?? error(startServed))).waiting
        }
        waiting?.resume()
    }

    var result: Result<AuthorizationResponse, OIDCError>? { lock.withLock { outcome } }

    /// With the lock held: records `result` unless there is an outcome already; the continuation to
    /// resume once the lock is released.
    private func decideLocked(_ result: Result<AuthorizationResponse, OIDCError>) -> (decided: Bool, waiting: CheckedContinuation<Void, Never>?) {
        guard outcome == nil else { return (false, nil) }
        outcome = result
        phase = .finished
        defer { continuation = nil }
        return (true, continuation)
    }

    /// The hold of a valid callback is over without a second request for the start URL: its result
    /// is the login's.
    private func releaseHeld() {
        let waiting = lock.withLock { () -> CheckedContinuation<Void, Never>? in
            guard case .holding(_, let result) = phase else { return nil }
            return decideLocked(result).waiting
        }
        waiting?.resume()
    }

    // MARK: Requests

    /// The answer to one request head, now or after an asynchronous check; a valid callback also
    /// decides the login's outcome.
    func respond(to head: HTTPRequestHead) -> LoopbackAnswer {
        let target = LoopbackRequestTarget(head.uri)
        let metadata: Logger.Metadata = ["method": .string(head.method.rawValue), "path": .string(target.loggablePath(startPath: startPath))]
        switch answer(head, target: target) {
        case .now(let response):
            logger.trace("loopback request answered", metadata: metadata.merging(["status": .int(response.status)]) { $1 })
            return .now(response)
        case .later(let produce):
            return .later { [logger] in
                let response = await produce()
                logger.trace("loopback request answered", metadata: metadata.merging(["status": .int(response.status)]) { $1 })
                return response
            }
        }
    }

    private func answer(_ head: HTTPRequestHead, target: LoopbackRequestTarget) -> LoopbackAnswer {
        guard head.uri.utf8.count <= Self.maximumTargetLength else { return .now(LoopbackPage.uriTooLong()) }
        guard head.version == .http1_1 else { return .now(LoopbackPage.versionNotSupported()) }
        let hostFields = head.headers["Host"]
        let allowed = lock.withLock { allowedHosts }
        guard hostFields.count == 1, let host = hostFields.first, allowed.contains(host.lowercased()) else {
            logger.notice(
                "loopback request refused: Host is not the listener's", metadata: ["host": .untrusted(hostFields.joined(separator: ","))]
            )
            return .now(LoopbackPage.badRequest())  // DNS rebinding: another name pointing at 127.0.0.1
        }
        if let authority = target.authority, !allowed.contains(authority) {
            logger.notice("loopback request refused: its absolute-form target names another host", metadata: ["host": .untrusted(authority)])
            return .now(LoopbackPage.badRequest())
        }
        guard head.method == .GET || head.method == .HEAD else { return .now(LoopbackPage.methodNotAllowed()) }
        let lengths = head.headers["Content-Length"]
        guard head.headers["Transfer-Encoding"].isEmpty, lengths.allSatisfy({ $0 == "0" }) else {
            return .now(LoopbackPage.badRequest())  // GET and HEAD carry no body here
        }

        let path = target.path
        if path == startPath {
            // Only a GET uses the one-time link: a HEAD (a link checker) would reveal it without opening it.
            guard head.method == .GET else { return .now(LoopbackPage.methodNotAllowed(allow: "GET")) }
            return .now(openStart())
        }
        guard path == callbackPath else { return .now(LoopbackPage.notFound()) }
        return callback(target: target, host: host.lowercased())
    }

    /// The start URL: a 302 to the authorization URL the first time while a login is served; any
    /// later request while the login waits or holds its callback aborts it (``reusedError``).
    private func openStart() -> LoopbackResponse {
        enum Answer { case notWaiting, redirect(String), abort, aborted }
        var waiting: CheckedContinuation<Void, Never>?
        let answer = lock.withLock { () -> Answer in
            switch phase {
            case .ready:
                return .notWaiting
            case .waiting(_, let location) where !startServed:
                startServed = true
                return .redirect(location)
            case .waiting, .holding:
                aborted = true
                waiting = decideLocked(.failure(Self.reusedError)).waiting
                return .abort
            case .finished:
                return aborted ? .aborted : .notWaiting
            }
        }
        waiting?.resume()
        switch answer {
        case .notWaiting:
            return LoopbackPage.notWaiting()
        case .redirect(let location):
            logger.debug("start URL opened; redirecting the browser to the provider")
            return LoopbackPage.redirect(to: location)
        case .abort:
            logger.warning("start URL opened a second time: login aborted (another local program may have opened it first)")
            return LoopbackPage.aborted()
        case .aborted:
            return LoopbackPage.aborted()
        }
    }

    /// The callback path: requests that are not this login's are answered and ignored; the first one
    /// with the right state ends the wait, whatever else it carries (after the callback grace when
    /// the start URL was opened).
    private func callback(target: LoopbackRequestTarget, host: String) -> LoopbackAnswer {
        let (request, jarm) = lock.withLock { () -> (AuthorizationRequest?, LoopbackJARMCheck?) in
            if case .waiting(let request, _) = phase { return (request, self.jarm) }
            return (nil, nil)
        }
        guard let request else { return .now(leftoverPage()) }
        if let jarm { return signedCallback(query: target.query, request: request, check: jarm) }
        guard Self.carriesState(of: request, query: target.query) else {
            logger.notice("callback without this login's state ignored (missing, repeated or wrong)")
            return .now(LoopbackPage.foreign())
        }

        let result: Result<AuthorizationResponse, OIDCError>
        if let url = URL(string: "http://\(host)\(target.pathAndQuery)") {
            result = Result { () throws(OIDCError) in try AuthorizationResponse(callbackURL: url, request: request) }
        } else {
            result = .failure(OIDCError(.malformedURL, "The callback URL is malformed; the provider's answer cannot be read."))
        }
        return .now(conclude(result, for: request))
    }

    /// A callback of `request` with its state checked: its result becomes the login's outcome
    /// (after the callback grace when the start URL was opened), unless the login ended meanwhile.
    func conclude(_ result: Result<AuthorizationResponse, OIDCError>, for request: AuthorizationRequest) -> LoopbackResponse {
        var waiting: CheckedContinuation<Void, Never>?
        let (accepted, held) = lock.withLock { () -> (Bool, Bool) in
            guard case .waiting(let served, _) = phase, served.state == request.state else { return (false, false) }  // decided meanwhile
            if startServed, callbackGrace > .zero {
                phase = .holding(request: request, result: result)
                return (true, true)
            }
            waiting = decideLocked(result).waiting
            return (true, false)
        }
        waiting?.resume()
        guard accepted else { return leftoverPage() }
        if held {
            eventLoop.scheduleTask(in: TimeAmount(callbackGrace)) { self.releaseHeld() }
        }
        switch result {
        case .success:
            logger.debug("callback received with a code", metadata: held ? ["held_ms": .int(Self.milliseconds(callbackGrace))] : [:])
            return LoopbackPage.success()
        case .failure(let error):
            logger.debug("callback received with an error", metadata: .failure(error))
            return LoopbackPage.failure(error)
        }
    }

    /// Remembers a signed callback's failed verification, for the timeout to report.
    func rememberRefusal(_ error: OIDCError) {
        lock.withLock { lastRefusal = error }
    }

    /// Keeps `task`, an answer being made, until ``takeDeferredAnswers()``.
    func trackDeferredAnswer(_ task: Task<Void, Never>) {
        lock.withLock { deferredAnswers.append(task) }
    }

    /// The answers still being made, for the listener to wait for before it stops its thread.
    func takeDeferredAnswers() -> [Task<Void, Never>] {
        lock.withLock {
            defer { deferredAnswers = [] }
            return deferredAnswers
        }
    }

    /// The answer to a callback when no login waits for one: the abort page after an abort.
    private func leftoverPage() -> LoopbackResponse {
        lock.withLock { aborted } ? LoopbackPage.aborted() : LoopbackPage.notWaiting()
    }

    private static func milliseconds(_ duration: Duration) -> Int {
        let (seconds, attoseconds) = duration.components
        return Int(seconds) * 1000 + Int(attoseconds / 1_000_000_000_000_000)
    }

    /// Whether the query is readable and has exactly one `state`, equal to the request's (constant time).
    static func carriesState(of request: AuthorizationRequest, query: Substring) -> Bool {
        guard let parameters = try? FormURLEncoding.decode(query, allowDuplicates: true) else { return false }
        let states = parameters.filter { $0.name == "state" }
        guard states.count == 1, let state = states.first else { return false }
        return ConstantTime.equals(state.value, request.state)
    }
}
