public import Foundation
public import Logging

/// Loads provider metadata and keeps it per issuer.
///
/// Tries `{issuer}/.well-known/openid-configuration` (OpenID Connect Discovery §4), then, on 404,
/// RFC 8414's `https://host/.well-known/oauth-authorization-server{path}`. Concurrent callers for
/// one issuer share one fetch; a document is reused for ``maximumAge``.
public actor ProviderDiscovery {
    /// The transport the metadata documents are fetched through.
    public let transport: any HTTPTransport
    /// How long a fetched document is reused, in seconds (3600 by default).
    public let maximumAge: TimeInterval
    /// Timeout, size limit and redirect policy of the document requests, as given at initialization.
    public var requestOptions: HTTPRequestOptions
    /// Where fetches and cache decisions are logged (label `oidc.discovery` by convention).
    public nonisolated let logger: Logger
    private let now: @Sendable () -> Date
    private var cache: [String: (metadata: ProviderMetadata, fetchedAt: Date)] = [:]
    private var fetches = SingleFlight<String, ProviderMetadata>()

    /// A discovery client with an empty cache.
    ///
    /// - Parameters:
    ///   - transport: fetches the documents.
    ///   - maximumAge: how long a document is reused, in seconds (one hour by default).
    ///   - requestOptions: timeout, size limit and redirect policy of each request.
    ///   - now: the clock that dates cached documents (injectable for tests).
    ///   - logger: where fetches (issuer, URL, outcome) and cache hits are logged; `nil` (the
    ///     default) logs nothing.
    public init(
        transport: any HTTPTransport, maximumAge: TimeInterval = 3600, requestOptions: HTTPRequestOptions = HTTPRequestOptions(),
        now: @escaping @Sendable () -> Date = { Date() }, logger: Logger? = nil
    ) {
        self.logger = logger ?? OIDCLog.discovery
        self.transport = transport
        self.maximumAge = maximumAge
        self.requestOptions = requestOptions
        self.now = now
    }

    /// The validated metadata of `issuer`.
    ///
    /// - Throws: ``OIDCError``: `invalidArgument`/`insecureEndpoint` for an issuer that is not an
    ///   https URL (http on loopback) without query or fragment; `networkFailure`, `timedOut`,
    ///   `serverError` (transient: try again later); `malformedResponse` for no or an unreadable
    ///   document; `issuerMismatch` for a document of another issuer.
    public func metadata(for issuer: String) async throws(OIDCError) -> ProviderMetadata {
        if let cached = cache[issuer], now().timeIntervalSince(cached.fetchedAt) < maximumAge {
            logger.trace("discovery cache hit", metadata: ["issuer": .issuer(issuer)])
            return cached.metadata
        }
        let task: Task<ProviderMetadata, any Error>
        if let running = fetches.task(for: issuer) {
            logger.trace("waiting for a discovery fetch in flight", metadata: ["issuer": .issuer(issuer)])
            task = running
        } else {
            logger.debug("fetching provider metadata", metadata: ["issuer": .issuer(issuer), "cached": .bool(cache[issuer] != nil)])
            task = fetches.launch(issuer) { number in
                Task {
                    defer { self.fetches.land(issuer, number) }
                    return try await self.fetchAndCache(issuer)
                }
            }
        }
        // A caller cancelled while it waits stops waiting; the fetch goes on for the others.
        return try await SingleFlight<String, ProviderMetadata>.value(
            of: task, cancelled: OIDCError(.cancelled, "Cancelled while the provider's metadata was being fetched."),
            failed: { error in OIDCError(.networkFailure, "Discovery failed (\(type(of: error))).") }
        )
    }

    /// The fetch itself: the document cached on success, the failure logged once.
    private func fetchAndCache(_ issuer: String) async throws(OIDCError) -> ProviderMetadata {
        let transport = self.transport, options = requestOptions, logger = self.logger
        do {
            let metadata = try await Self.load(issuer, transport: transport, options: options, logger: logger)
            cache[issuer] = (metadata, now())
            return metadata
        } catch {
            logger.debug("discovery failed", metadata: Logger.Metadata.failure(error).merging(["issuer": .issuer(issuer)]) { $1 })
            throw error
        }
    }

    /// Forgets the cached document of `issuer` (after a key rotation or a configuration change).
    public func invalidate(_ issuer: String) { cache[issuer] = nil }

    /// The two well-known locations for `issuer`, in the order they are tried.
    package static func wellKnownURLs(for issuer: String) throws(OIDCError) -> [URL] {
        guard let url = URL(string: issuer), let components = URLComponents(url: url, resolvingAgainstBaseURL: false),
            components.query == nil, components.fragment == nil
        else {
            throw .invalidArgument(EndpointURLPolicy.notAbsolute(issuer, role: "issuer", extra: " without query or fragment"))
        }
        try EndpointURLPolicy.validate(url, role: "issuer")
        let trimmed = issuer.hasSuffix("/") ? String(issuer.dropLast()) : issuer
        var oauth = components
        let path = components.percentEncodedPath == "/" ? "" : components.percentEncodedPath
        oauth.percentEncodedPath = "/.well-known/oauth-authorization-server" + path
        guard let openID = URL(string: trimmed + "/.well-known/openid-configuration"), let rfc8414 = oauth.url else {
            throw .invalidArgument("The issuer '\(issuer)' does not make a discovery URL.")
        }
        return [openID, rfc8414]
    }

    private static func load(
        _ issuer: String, transport: any HTTPTransport, options: HTTPRequestOptions, logger: Logger
    ) async throws(OIDCError) -> ProviderMetadata {
        let locations = try wellKnownURLs(for: issuer)
        for (index, location) in locations.enumerated() {
            var headers = HTTPHeaders()
            headers.add("Accept", "application/json")
            let response = try await transport.send(HTTPRequest(method: "GET", url: location, headers: headers), options: options)
            if response.status == 404 || response.status == 410, index + 1 < locations.count {
                logger.trace("no OpenID discovery document; trying RFC 8414", metadata: ["issuer": .issuer(issuer), "url": .endpoint(location)])
                continue
            }
            if response.status == 404 || response.status == 410 {
                // Every location answered "not here": the issuer URL is wrong; the client plays no part.
                throw noDocument(issuer, tried: locations)
            }
            guard response.status == 200 else {
                throw HTTPErrorMapping.unexpectedStatus(response, endpoint: location, what: "metadata document")
            }
            let metadata = try ProviderMetadata(document: response.body, expectedIssuer: issuer)
            logger.debug("provider metadata loaded", metadata: ["issuer": .issuer(issuer), "url": .endpoint(location)])
            return metadata
        }
        throw noDocument(issuer, tried: locations)
    }

    /// No discovery document at any of `locations`: the issuer URL is wrong (a missing or extra
    /// path segment, such as Keycloak's `/realms/NAME`), which the message says, naming every URL
    /// tried.
    static func noDocument(_ issuer: String, tried locations: [URL]) -> OIDCError {
        let tried = locations.map { HTTPErrorMapping.describe($0) }
        return OIDCError(
            .malformedResponse,
            "No discovery document at the issuer \(issuer) (tried \(tried.joined(separator: ", "))): check the issuer URL (oidc --issuer); it is the provider's issuer exactly, path included."
        )
    }
}
