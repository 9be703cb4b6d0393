public import Foundation
public import Logging
internal import NIOCore
internal import NIOHTTP1
internal import NIOPosix

/// RFC 8252 §7.3 loopback redirect for native apps and CLIs.
///
/// ```swift
/// let listener = try await LoopbackRedirectListener.start()
/// let request = try AuthorizationRequest(provider: provider, clientID: "cli", redirectURI: listener.redirectURI)
/// try listener.serve(request)                           // the start URL now redirects to the provider
/// print("Open \(listener.startURL) in your browser")    // http://127.0.0.1:PORT/<random>, short
/// let response = try await listener.waitForAuthorization(request, timeout: .seconds(180))
/// ```
///
/// The listener binds loopback IP literals only (never `localhost`, RFC 8252 §8.3), on a port the
/// system chooses unless told otherwise, and serves one login: the start URL (a random path)
/// redirects once to the authorization URL; the callback path takes the provider's redirect. A callback whose `state` is
/// missing, repeated or wrong is answered with an error page and ignored, so that somebody else's
/// request can neither end nor complete the login; the first callback with the right state ends it,
/// and the listener closes. Requests whose `Host` is not one of the listener's addresses are refused
/// (DNS rebinding). Pages are small, escaped, and never cached; no page shows the code or the state.
///
/// A second request for the start URL while the login waits, or within
/// ``Configuration/callbackGrace`` after the first valid callback, aborts the login with
/// ``OIDCError/Code/startURLReused``: the user's browser always opens the start URL, so when another
/// local program opened it first (and could sign in with its own account), the browser's request is
/// the second one, and the swapped login ends in an abort instead of being kept. Keep the start URL
/// out of other users' sight all the same: ``SystemBrowser`` never puts it on a command line.
///
/// Owns one event-loop thread, its sockets and connections; ``waitForAuthorization(_:timeout:)`` and
/// ``close()`` release all of them. Connections are bounded in number
/// (``Configuration/maximumConnections``, the oldest without a request head evicted when full) and in
/// time (``Configuration/requestHeadTimeout``, ``Configuration/idleTimeout``).
///
/// With a logger (``start(_:logger:)``): the bound redirect URI, each request's method, path and
/// answer at `debug`/`trace`, a callback with a wrong or missing state or a refused `Host` at
/// `notice`, an abort at `warning`. Never a query, so never the code or the state, and never the
/// start URL's random path (in an absolute-form target too).
public final class LoopbackRedirectListener: Sendable {
    /// The configuration the listener was started with.
    public let configuration: Configuration
    /// The bound port of the first endpoint: the one in ``redirectURI``.
    public let port: Int
    /// The endpoints as bound, with their actual ports.
    let boundEndpoints: [Endpoint]
    private let group: MultiThreadedEventLoopGroup
    private let servers: [any Channel]
    private let state: LoopbackState
    private let authority: String
    private let start: URL

    /// The redirect URI to register and send: `http://127.0.0.1:PORT/callback`, or
    /// `http://[::1]:PORT/callback` when the first endpoint is `::1`.
    public var redirectURI: String { "http://\(authority)\(configuration.callbackPath)" }

    /// Whether a wait has begun (for tests that must not race it).
    package var isWaiting: Bool { state.isAwaited }

    /// How many connections are open (for tests of the connection limit).
    package var openConnectionCount: Int { state.connections.count }

    /// `http://127.0.0.1:PORT/<random>`: opening it redirects to the authorization URL once the
    /// login is served (``serve(_:)``), so the URL a user sees or copies stays short. It redirects
    /// once; a second request while the login waits (or holds its callback) aborts the login with
    /// ``OIDCError/Code/startURLReused``. Its random path (128 bits) keeps the authorization URL, and
    /// so the state, from other local processes that find the port (`/` answers 404).
    public var startURL: URL { start }

    private init(
        configuration: Configuration, boundEndpoints: [Endpoint], start: URL, group: MultiThreadedEventLoopGroup,
        servers: [any Channel], state: LoopbackState
    ) {
        self.configuration = configuration
        self.boundEndpoints = boundEndpoints
        self.port = boundEndpoints[0].port
        self.authority = boundEndpoints[0].description
        self.start = start
        self.group = group
        self.servers = servers
        self.state = state
    }

    deinit {
        // Dropped without close(): release the thread and sockets without waiting.
        guard !state.hasStartedClosing else { return }
        state.finish(.failure(Self.cancelledError))
        for server in servers { server.close(promise: nil) }
        group.shutdownGracefully { _ in }
    }

    /// Binds every endpoint and starts serving.
    ///
    /// An endpoint after the first that asks for port 0 gets the first one's port, so `127.0.0.1`
    /// and `::1` share one port and one redirect URI; when that port is taken on the other address,
    /// everything is closed and tried again on a new port (at most 5 times).
    ///
    /// - Parameters:
    ///   - configuration: where to listen, the callback path, the limits.
    ///   - logger: where requests to the listener and the login's outcome are logged, never with a
    ///     query (label `oidc.loopback` by convention); `nil` (the default) logs nothing.
    /// - Throws: ``OIDCError/Code/invalidArgument`` for a bad configuration or an address that cannot
    ///   be bound here (such as `::1` on a host without IPv6, or a privileged port);
    ///   ``OIDCError/Code/portInUse`` when a fixed port is taken by another program.
    public static func start(_ configuration: Configuration = .init(), logger: Logger? = nil) async throws(OIDCError) -> LoopbackRedirectListener {
        let logger = logger ?? OIDCLog.loopback
        try configuration.validate()
        var endpoints: [Endpoint] = []
        for endpoint in configuration.endpoints { endpoints.append(try Endpoint(host: endpoint.host, port: endpoint.port)) }
        let startPath = "/" + (try RandomToken.generate(byteCount: RandomToken.minimumByteCount))
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let state = LoopbackState(
            callbackPath: configuration.callbackPath, startPath: startPath, maximumConnections: configuration.maximumConnections,
            callbackGrace: configuration.callbackGrace, eventLoop: group.next(), logger: logger
        )
        let binder = LoopbackBinder(
            group: group, state: state, idleTimeout: configuration.idleTimeout, requestHeadTimeout: configuration.requestHeadTimeout
        )
        do throws(OIDCError) {
            let (servers, bound) = try await binder.bindAll(endpoints)
            var hosts = Set<String>()
            for endpoint in bound {
                hosts.insert(endpoint.description)
                hosts.insert("localhost:\(endpoint.port)")
            }
            state.allowHosts(hosts)
            guard let first = bound.first, let start = URL(string: "http://\(first.description)\(startPath)") else {
                throw OIDCError(.invalidArgument, "The loopback listener bound no endpoint.")
            }
            logger.debug(
                "loopback listener started",
                metadata: [
                    "redirect_uri": .string("http://\(first.description)\(configuration.callbackPath)"),
                    "endpoints": .string(bound.map(\.description).joined(separator: ",")),
                ]
            )
            return LoopbackRedirectListener(
                configuration: configuration, boundEndpoints: bound, start: start, group: group, servers: servers, state: state
            )
        } catch {
            try? await group.shutdownGracefully()
            throw error
        }
    }

    /// Starts answering the ``startURL`` with a 302 to `request.url()` and accepting `request`'s callback,
    /// without waiting: call it before opening the browser, so that a browser quicker than the call to
    /// ``waitForAuthorization(_:timeout:)`` finds the login. A callback that arrives before the wait
    /// starts is kept for it.
    ///
    /// - Throws: ``OIDCError/Code/invalidArgument`` for a request whose redirect URI does not lead
    ///   here, when another request is already served, or after ``close()``; what
    ///   ``AuthorizationRequest/url()`` throws.
    public func serve(_ request: AuthorizationRequest) throws(OIDCError) {
        try serve(request, redirectingTo: try request.url())
    }

    /// Starts answering the ``startURL`` with a 302 to `location` and accepting `request`'s
    /// callback, without waiting: ``serve(_:)`` for a login whose browser goes elsewhere than
    /// `request.url()`, such as a pushed authorization request's short URL
    /// (``RelyingParty/authorizationURL(for:)``).
    ///
    /// - Throws: ``OIDCError/Code/invalidArgument`` for a request whose redirect URI does not lead
    ///   here, when another request is already served, or after ``close()``;
    ///   ``OIDCError/Code/insecureEndpoint`` for a `location` that is not https (or http on loopback).
    public func serve(_ request: AuthorizationRequest, redirectingTo location: URL) throws(OIDCError) {
        if let mode = request.responseMode, mode.isJARM {
            throw .invalidArgument(
                "The request asked for a signed response (response_mode=\(mode.rawValue), JARM): serve it with serve(_:redirectingTo:verifier:keys:), so that its callback can be verified.")
        }
        try checkRedirectURI(of: request)
        try EndpointURLPolicy.validate(location, role: "authorization URL")
        try state.beginWait(for: request, location: location.absoluteString, awaiting: false)
    }

    /// ``serve(_:redirectingTo:)`` for a request that asked for a signed response (JARM,
    /// ``AuthorizationRequest/responseMode``): a callback's `response` is verified with `verifier`
    /// and `keys` (which may be fetched) before its state is even looked at, then checked as a
    /// plain callback is. A response that fails its verification is answered with a refusal page
    /// and ignored, as a wrong state is (it proves nothing, not even which login it is for); if no
    /// callback passes before the timeout, ``waitForAuthorization(_:timeout:)`` throws that
    /// refusal (`issuerMismatch`, `invalidSignature`, …). Plain parameters with this login's
    /// state, instead of `response`, end the login with ``OIDCError/Code/unsecuredResponse``.
    ///
    /// - Throws: as ``serve(_:redirectingTo:)``; ``OIDCError/Code/invalidArgument`` for a request
    ///   that did not ask for a signed response.
    public func serve(_ request: AuthorizationRequest, redirectingTo location: URL, verifier: JARMVerifier, keys: JWKSCache) throws(OIDCError) {
        guard request.responseMode?.isJARM == true else {
            throw .invalidArgument("The request did not ask for a signed response (JARM); serve it with serve(_:redirectingTo:).")
        }
        try checkRedirectURI(of: request)
        try EndpointURLPolicy.validate(location, role: "authorization URL")
        try state.beginWait(
            for: request, location: location.absoluteString, awaiting: false, jarm: LoopbackJARMCheck(verifier: verifier, keys: keys))
    }

    /// Points the ``startURL`` at `location` instead, as long as nobody has opened it yet: a pushed
    /// authorization request's URL renewed before its `request_uri` expires.
    ///
    /// - Returns: whether the start URL now redirects to `location`; `false` once it has been
    ///   opened, or when `request` is not the one served or the login has ended.
    /// - Throws: ``OIDCError/Code/insecureEndpoint`` for a `location` that is not https (or http on loopback).
    public func replaceRedirect(for request: AuthorizationRequest, with location: URL) throws(OIDCError) -> Bool {
        try EndpointURLPolicy.validate(location, role: "authorization URL")
        return state.replaceLocation(for: request, with: location.absoluteString)
    }

    /// Serves the ``startURL`` as a 302 to `request.url()` (unless ``serve(_:)`` already does) and waits for the callback that belongs to `request`.
    ///
    /// Callbacks without exactly one `state` equal to `request.state` (compared in constant time)
    /// are answered with an error page and ignored. The first one with the right state is checked by
    /// ``AuthorizationResponse/init(callbackURL:request:)`` (a repeated parameter, RFC 9207 `iss`,
    /// a provider error, no code); the browser gets a success or failure page, and this method
    /// returns or throws accordingly: at once when the start URL was never opened, else after
    /// ``Configuration/callbackGrace``, in which a request for the start URL aborts the login
    /// instead. A timeout that falls in that grace does not discard the callback. In every case the
    /// listener is closed before this returns or throws: sockets closed, connections closed once
    /// their answer is flushed, thread ended.
    ///
    /// - Parameters:
    ///   - request: the request whose `redirectURI` leads to this listener (use ``redirectURI``).
    ///   - timeout: how long to wait for the callback; `nil` waits until cancelled.
    /// - Throws: what ``AuthorizationResponse/init(callbackURL:request:)`` throws for the first callback
    ///   with the right state; ``OIDCError/Code/startURLReused`` when the start URL was requested a
    ///   second time (category `security`: treat it as an attack, store nothing);
    ///   ``OIDCError/Code/loginTimedOut`` when `timeout` passes;
    ///   ``OIDCError/Code/cancelled`` when the task is cancelled or ``close()`` is called;
    ///   ``OIDCError/Code/invalidArgument`` when called twice or after ``close()``, for a request that
    ///   asked for a signed response (JARM) and was not served with
    ///   ``serve(_:redirectingTo:verifier:keys:)``, for a request whose
    ///   redirect URI does not lead here or a timeout that is not positive; what ``AuthorizationRequest/url()``
    ///   throws.
    public func waitForAuthorization(_ request: AuthorizationRequest, timeout: Duration? = nil) async throws(OIDCError)
        -> AuthorizationResponse
    {
        let location: String
        do throws(OIDCError) {
            if let mode = request.responseMode, mode.isJARM, state.isReady {
                throw .invalidArgument(
                    "The request asked for a signed response (response_mode=\(mode.rawValue), JARM): serve it with serve(_:redirectingTo:verifier:keys:) before waiting, so that its callback can be verified.")
            }
            try checkRedirectURI(of: request)
            if let timeout, timeout <= .zero { throw .invalidArgument("The login timeout must be positive.") }
            location = try request.url().absoluteString
        } catch {
            // Not started: leave a wait in progress (a second call) alone.
            if state.isReady { await close() }
            throw error
        }
        try state.beginWait(for: request, location: location, awaiting: true)

        let deadline = timeout.map { timeout in
            group.next().scheduleTask(in: TimeAmount(min(timeout, .seconds(365 * 86_400)))) { [state, redirectURI] in
                state.timeOut { opened in Self.timedOutError(redirectURI: redirectURI, timeout: timeout, startOpened: opened) }
            }
        }
        await withTaskCancellationHandler {
            await state.waitForOutcome()
        } onCancel: { [state] in
            state.finish(.failure(Self.cancelledError))
        }
        deadline?.cancel()
        await close()
        switch state.result {
        case .success(let response): return response
        case .failure(let error): throw error
        case nil: throw Self.cancelledError
        }
    }

    /// Closes the listener: a wait in progress throws ``OIDCError/Code/cancelled``; connections close
    /// once their answer is flushed (at most 2 seconds later; a signed callback still being verified
    /// is let finish); the sockets and the thread are released.
    /// Idempotent; safe to call from any task, and returns when everything is closed.
    public func close() async {
        let closing = state.closingTask {
            Task { [state, servers, group] in
                state.finish(.failure(Self.cancelledError))
                let connections = state.connections.stopAdmitting()
                for server in servers { try? await server.close() }
                guard let loop = connections.first?.eventLoop else {
                    for answer in state.takeDeferredAnswers() { await answer.value }
                    try? await group.shutdownGracefully()
                    return
                }
                for connection in connections { connection.pipeline.fireUserInboundEventTriggered(LoopbackListenerClosing()) }
                let forced = loop.scheduleTask(in: Self.closeGrace) {
                    for connection in connections { connection.close(promise: nil) }
                }
                for connection in connections { try? await connection.closeFuture.get() }
                forced.cancel()
                // A signed callback still being verified answers on the loop: let it finish first.
                for answer in state.takeDeferredAnswers() { await answer.value }
                try? await group.shutdownGracefully()
            }
        }
        await closing.value
    }

    /// How long an answer being written may delay ``close()``.
    static let closeGrace = TimeAmount.seconds(2)

    static let cancelledError = OIDCError(.cancelled, "The login was cancelled.")

    /// - Parameter startOpened: whether a browser ever opened the start URL; when none did, the
    ///   message says so, and what to do (a browser that cannot read local files never follows the
    ///   private page ``SystemBrowser`` hands it).
    /// - Parameter byHand: no browser was started (the URL was only shown, to be opened by hand):
    ///   the advice is for that person, not about browsers that cannot open local files.
    static func timedOutError(redirectURI: String, timeout: Duration, startOpened: Bool = true, byHand: Bool = false) -> OIDCError {
        let message = startOpened
            ? "No sign-in came back to \(redirectURI) within \(Self.seconds(timeout)) s; run the login again (and finish it in the browser in time), or give it more time."
            : byHand
            ? "Nobody opened the sign-in link within \(Self.seconds(timeout)) s: run the login again and open the URL it prints in a browser on this machine (the sign-in comes back to \(redirectURI), which a browser elsewhere cannot reach), or give it more time; where no browser runs here, sign in from another device with oidc login --flow device, if the provider offers it."
            : "No browser opened the sign-in link within \(Self.seconds(timeout)) s: open the URL printed above in a browser on this machine, or, for a browser that cannot open local files (a snap or flatpak browser, a $BROWSER that forwards URLs), set OIDC_BROWSER_HANDOFF=url and run the login again."
        return OIDCError(.loginTimedOut, message, context: ["timeout": "\(Self.seconds(timeout)) s", "startOpened": String(startOpened)])
    }

    /// `180`, `0.5`: whole seconds without a fraction, otherwise up to three decimals.
    private static func seconds(_ duration: Duration) -> String {
        let (seconds, attoseconds) = duration.components
        let milliseconds = attoseconds / 1_000_000_000_000_000
        guard milliseconds != 0 else { return String(seconds) }
        var fraction = String(milliseconds)
        fraction = String(repeating: "0", count: max(0, 3 - fraction.count)) + fraction
        while fraction.hasSuffix("0") { fraction.removeLast() }
        return "\(seconds).\(fraction)"
    }

    /// The request's redirect URI must be http to one of the bound ports (by IP literal or
    /// `localhost`) on the callback path, or the provider would send the browser elsewhere.
    private func checkRedirectURI(of request: AuthorizationRequest) throws(OIDCError) {
        let components = URLComponents(string: request.redirectURI)
        let host = components?.host.map { $0.hasPrefix("[") ? $0 : ($0.contains(":") ? "[\($0)]" : $0) }?.lowercased()
        let authority = host.flatMap { host in components?.port.map { "\(host):\($0)" } }
        let leadsHere =
            components?.scheme?.lowercased() == "http" && components?.percentEncodedPath == configuration.callbackPath
            && components?.percentEncodedQuery == nil
            && authority.map { authority in
                boundEndpoints.contains { $0.description == authority || "localhost:\($0.port)" == authority }
            } == true
        guard leadsHere else {
            throw .invalidArgument(
                "The request's redirect URI does not lead to this listener; build the request with the listener's redirectURI (\(redirectURI)).",
                context: ["expected": redirectURI]
            )
        }
    }
}
