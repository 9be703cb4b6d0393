internal import Foundation

extension AuthenticatedSession {
    /// How a session uses its tokens: given once, at ``AuthenticatedSession/init(store:key:source:transport:allowlist:options:now:logger:)``,
    /// and brought into range there (`inRange`), so that no later use clamps anything.
    ///
    /// ```swift
    /// var options = AuthenticatedSession.Options()
    /// options.refreshMargin = .seconds(120)
    /// options.refreshedIDTokenKeys = keys      // RelyingParty.session(…) sets it for you
    /// ```
    public struct Options: Sendable {
        /// A token expiring within this margin is refreshed before use: 60 s by default, within
        /// 0…1 day.
        public var refreshMargin: Duration
        /// Timeout and size limit of the resource requests.
        public var requestOptions: HTTPRequestOptions
        /// How long to wait before asking a host application's token provider again after
        /// "temporarily unavailable" without a delay of its own: 60 s by default, within 0…1 day.
        public var temporarilyUnavailableDelay: Duration
        /// How long a refresh waits for another instance's refresh of the same login that is marked
        /// in flight (stores whose lock can be lost, ``TokenStore/lockCanBeLost``) before it gives up
        /// with ``OIDCError/Code/temporarilyUnavailable``: 10 s by default, within 0…300 s. A mark
        /// counts for three times the token client's timeout plus 60 s (150 s by default), from the
        /// time it claims and at most from when this session first saw it; past that, the refresh it
        /// marks ended without saving (its instance died), and the session refreshes itself.
        public var inFlightRefreshWait: Duration
        /// The provider's keys, to verify the ID tokens that refreshes bring (OIDC Core §12.2: same
        /// issuer and subject, this client, the new access token's `at_hash`, the original
        /// `auth_time`). Without keys a refreshed ID token is never stored: the one verified at
        /// login is kept. ``RelyingParty/session(store:key:allowlist:options:)`` sets its own.
        public var refreshedIDTokenKeys: JWKSCache?
        /// The signature algorithms a refreshed ID token may use; ``IDTokenVerifier``'s default (the
        /// asymmetric ones) when `nil`. The ``securityProfile`` narrows them further.
        public var refreshedIDTokenAlgorithms: Set<JWSAlgorithm>?
        /// Your own stages of the resource pipeline (tracing, metrics, a header; see <doc:Pipelines>),
        /// in order: each sees every request as it leaves, with the access token's header and its
        /// proof, and each answer as it comes back, before the library's nonce retry and refresh.
        /// They run once per attempt.
        public var stages: [any HTTPStage] = []
        /// The relying party's ``RelyingParty/Configuration/callStages``: stages around each whole
        /// ``AuthenticatedSession/send(_:)``, the first outermost.
        package var callStages: [any CallStage] = []
        /// The security profile the session holds refreshed ID tokens to, as its login was held:
        /// ``SecurityProfile/none`` by default; ``SecurityProfile/fapi2`` takes PS256, ES256 and EdDSA
        /// only (FAPI 2.0 §5.4.1). ``RelyingParty/session(store:key:allowlist:options:)`` sets the
        /// relying party's (``RelyingParty/Configuration/securityProfile``) unless one is given.
        public var securityProfile: SecurityProfile

        /// Options with the given values; every one has a default.
        public init(
            refreshMargin: Duration = .seconds(60), requestOptions: HTTPRequestOptions = HTTPRequestOptions(),
            temporarilyUnavailableDelay: Duration = .seconds(60), inFlightRefreshWait: Duration = .seconds(10),
            refreshedIDTokenKeys: JWKSCache? = nil, refreshedIDTokenAlgorithms: Set<JWSAlgorithm>? = nil,
            securityProfile: SecurityProfile = .none, stages: [any HTTPStage] = []
        ) {
            self.refreshMargin = refreshMargin
            self.requestOptions = requestOptions
            self.temporarilyUnavailableDelay = temporarilyUnavailableDelay
            self.inFlightRefreshWait = inFlightRefreshWait
            self.refreshedIDTokenKeys = refreshedIDTokenKeys
            self.refreshedIDTokenAlgorithms = refreshedIDTokenAlgorithms
            self.securityProfile = securityProfile
            self.stages = stages
        }

        /// These options with every duration brought into its documented range: a negative one
        /// becomes zero, one beyond its bound the bound.
        package var inRange: Options {
            var options = self
            options.refreshMargin = Self.clamped(refreshMargin, to: .seconds(86_400))
            options.temporarilyUnavailableDelay = Self.clamped(temporarilyUnavailableDelay, to: .seconds(86_400))
            options.inFlightRefreshWait = Self.clamped(inFlightRefreshWait, to: .seconds(300))
            return options
        }

        private static func clamped(_ value: Duration, to upper: Duration) -> Duration {
            min(max(value, .zero), upper)
        }

        /// Seconds as a `Duration`; `fallback` for a value that is not a finite number (the
        /// deprecated setters took seconds).
        static func duration(_ seconds: TimeInterval, fallback: Duration) -> Duration {
            guard seconds.isFinite else { return fallback }
            // Beyond a day every bound applies anyway; keeps the conversion in range.
            return .milliseconds(Int64((min(max(seconds, -1), 1e9) * 1000).rounded()))
        }
    }
}

extension Duration {
    /// This duration in seconds, as a `TimeInterval`.
    var timeInterval: TimeInterval {
        let (seconds, attoseconds) = components
        return TimeInterval(seconds) + TimeInterval(attoseconds) / 1e18
    }
}
