public import Foundation

/// The one error type of the library.
///
/// Match on ``code`` (`error.code == .stateMismatch`) and branch on ``category`` to decide what to do:
/// fix the configuration, log the user out, or try again later. The ``message`` says what went
/// wrong and what to do; ``context`` carries non-secret details (expected versus found values).
/// No secret (token, code, verifier, client secret) is ever part of an `OIDCError`.
public struct OIDCError: Error, Sendable, Equatable, CustomStringConvertible, LocalizedError {
    /// What kind of problem this is; the `oidc` command maps it to its exit code.
    public enum Category: String, Sendable, Hashable, CaseIterable {
        /// The caller's configuration or input is wrong; retrying will not help.
        case configuration
        /// The provider answered with an OAuth error (`access_denied`, `invalid_grant`, …).
        case provider
        /// A security check failed (state, issuer, signature, claims): treat as an attack.
        case security
        /// Network, timeout or a 5xx: try again later; nobody is logged out.
        case transient
        /// TLS, certificate pinning or the bearer-token host allowlist refused a connection.
        case transport
        /// The local token store could not be read or written.
        case storage
        /// The user or the caller cancelled.
        case cancelled
        /// A bug or an unexpected failure of a system library.
        case `internal`
    }

    /// An extensible, matchable error code.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Base: String, Sendable {
            case invalidArgument, insecureEndpoint, duplicateParameter, reservedParameter
            case malformedURL, malformedResponse, missingParameter
            case stateMissing, stateMismatch, issuerMissing, issuerMismatch
            case providerError, cancelled, notOurRedirect
            case randomFailure, cryptoFailure
            case invalidKey, malformedToken, algorithmNotAllowed, keyNotFound, ambiguousKey, invalidSignature
            case invalidClaim, tokenExpired, tokenNotYetValid, nonceMismatch, audienceMismatch
            case temporarilyUnavailable
            case storageFailure, corruptStore
            case networkFailure, timedOut, serverError, responseTooLarge
            case tlsFailure, pinMismatch, hostNotAllowed
            case notLoggedIn, unauthorized
            case portInUse, loginTimedOut, startURLReused
            case senderConstraintMissing, profileViolation
            case unsecuredResponse
            case resourceMismatch, noAuthorizationServer, pkceNotSupported, insufficientScope
            case insufficientUserAuthentication
        }

        private let base: Base
        private init(_ base: Base) { self.base = base }

        /// The code's name, such as `stateMismatch`.
        public var description: String { base.rawValue }

        var category: Category {
            switch base {
            case .invalidArgument, .insecureEndpoint, .reservedParameter, .notOurRedirect: .configuration
            case .duplicateParameter, .stateMissing, .stateMismatch, .issuerMissing, .issuerMismatch: .security
            case .malformedURL, .malformedResponse, .missingParameter, .providerError: .provider
            case .cancelled: .cancelled
            case .temporarilyUnavailable: .transient
            case .storageFailure, .corruptStore: .storage
            case .networkFailure, .timedOut, .serverError: .transient
            case .responseTooLarge: .provider
            case .tlsFailure, .pinMismatch, .hostNotAllowed: .transport
            case .notLoggedIn, .unauthorized: .provider
            case .portInUse: .configuration
            case .loginTimedOut: .cancelled
            case .startURLReused, .senderConstraintMissing, .unsecuredResponse: .security
            case .profileViolation: .configuration
            case .resourceMismatch: .security
            case .noAuthorizationServer, .pkceNotSupported, .insufficientScope, .insufficientUserAuthentication: .provider
            case .randomFailure, .cryptoFailure: .internal
            case .invalidKey, .malformedToken, .algorithmNotAllowed, .keyNotFound, .ambiguousKey, .invalidSignature,
                .invalidClaim, .tokenExpired, .tokenNotYetValid, .nonceMismatch, .audienceMismatch:
                .security
            }
        }

        /// A value given by the caller is out of range or malformed.
        public static let invalidArgument = Code(.invalidArgument)
        /// An endpoint is plain http on a host that is not loopback.
        public static let insecureEndpoint = Code(.insecureEndpoint)
        /// A parameter appears twice where the protocol allows it once.
        public static let duplicateParameter = Code(.duplicateParameter)
        /// An additional parameter tries to set a parameter the library sets itself.
        public static let reservedParameter = Code(.reservedParameter)
        /// A URL or its percent-encoding is malformed.
        public static let malformedURL = Code(.malformedURL)
        /// A response from the provider could not be understood.
        public static let malformedResponse = Code(.malformedResponse)
        /// A required parameter is missing from a response.
        public static let missingParameter = Code(.missingParameter)
        /// The callback carries no `state` (possible CSRF).
        public static let stateMissing = Code(.stateMissing)
        /// The callback's `state` is not the one we sent (possible CSRF).
        public static let stateMismatch = Code(.stateMismatch)
        /// The provider promised an `iss` parameter (RFC 9207) and the callback has none.
        public static let issuerMissing = Code(.issuerMissing)
        /// An issuer is not the expected one (RFC 9207 mix-up defence, discovery, ID token).
        public static let issuerMismatch = Code(.issuerMismatch)
        /// The provider answered with an OAuth error; see ``OIDCError/providerError``.
        public static let providerError = Code(.providerError)
        /// No token can be had now, but the login is kept: try again later; the context's
        /// `retryAfter` says in how many seconds. Either the host application's token provider
        /// said so (``TokenProviderOutcome/temporarilyUnavailable(retryAfter:)``), or another
        /// instance's refresh of the login is in flight and its tokens did not reach a store whose
        /// lock can be lost (``TokenStore/lockCanBeLost``) within
        /// ``AuthenticatedSession/inFlightRefreshWait``.
        public static let temporarilyUnavailable = Code(.temporarilyUnavailable)
        /// The token store could not be read or written (permissions, a full disk, a lock).
        public static let storageFailure = Code(.storageFailure)
        /// A stored login is unreadable; it was moved aside, never overwritten (the context names where).
        public static let corruptStore = Code(.corruptStore)
        /// The connection could not be made or broke (refused, reset, name not found): try again later.
        public static let networkFailure = Code(.networkFailure)
        /// The server did not answer in time: try again later.
        public static let timedOut = Code(.timedOut)
        /// The server answered 5xx (or an OAuth `server_error`/`temporarily_unavailable`): try again later.
        public static let serverError = Code(.serverError)
        /// The response body is larger than the configured limit.
        public static let responseTooLarge = Code(.responseTooLarge)
        /// The TLS handshake failed: an untrusted or expired certificate, a wrong host name.
        public static let tlsFailure = Code(.tlsFailure)
        /// The server's public key matches none of the pins configured for its host.
        public static let pinMismatch = Code(.pinMismatch)
        /// The request's host is not on the allowlist for bearer tokens, or plain http off loopback.
        public static let hostNotAllowed = Code(.hostNotAllowed)
        /// Nobody is logged in (no stored login, or it was logged out): log in first.
        public static let notLoggedIn = Code(.notLoggedIn)
        /// The resource refused the request even after one refresh and one retry (401).
        public static let unauthorized = Code(.unauthorized)
        /// The user cancelled the login.
        public static let cancelled = Code(.cancelled)
        /// The URL handed to the library is not the configured redirect.
        public static let notOurRedirect = Code(.notOurRedirect)
        /// The loopback redirect listener could not bind the port it was given (RFC 8252 §7.3).
        public static let portInUse = Code(.portInUse)
        /// No valid callback reached the loopback listener before the login's time limit.
        public static let loginTimedOut = Code(.loginTimedOut)
        /// The loopback login's start URL was opened a second time while the login waited, or just
        /// after its callback: another local program may have opened it first, to sign the user in to
        /// its own account. The login was aborted before the code was exchanged.
        public static let startURLReused = Code(.startURLReused)
        /// A token came back unbound where a sender-constrained one was asked for: `token_type`
        /// `Bearer` in answer to a DPoP proof (RFC 9449 §5), a downgrade refused.
        public static let senderConstraintMissing = Code(.senderConstraintMissing)
        /// A setting the chosen security profile forbids (FAPI 2.0); the message names the rule.
        /// Nothing was sent.
        public static let profileViolation = Code(.profileViolation)
        /// A signed authorization response (JARM, ``AuthorizationResponseMode/jwt``) was asked for
        /// and the callback carries plain parameters (`code`, `state`, `error`, …) instead of, or
        /// beside, the signed `response`: a downgrade, refused before anything in it is used.
        public static let unsecuredResponse = Code(.unsecuredResponse)
        /// A protected resource's metadata (RFC 9728 §3.3) names another `resource` than the URL
        /// the client started from, or the caller named an authorization server the metadata does
        /// not list: refused before anything is sent to it.
        public static let resourceMismatch = Code(.resourceMismatch)
        /// A protected resource's metadata lists no authorization server (RFC 9728 §2
        /// `authorization_servers`): nobody can issue a token for it.
        public static let noAuthorizationServer = Code(.noAuthorizationServer)
        /// The authorization server does not list `S256` in `code_challenge_methods_supported`
        /// (RFC 8414 §2, RFC 7636): a login without PKCE is refused before it starts.
        public static let pkceNotSupported = Code(.pkceNotSupported)
        /// A resource answered 403 `insufficient_scope` (RFC 6750 §3.1): the token lacks a scope
        /// the request needs; ``OIDCError/requiredScopes`` names what the resource asked for.
        /// Log in again for the union of the login's scopes and these (step-up); the session does
        /// not refresh or retry on it.
        public static let insufficientScope = Code(.insufficientScope)
        /// A resource answered 401 `insufficient_user_authentication` (RFC 9470): the login is not
        /// strong or recent enough; ``OIDCError/requiredACRValues`` and
        /// ``OIDCError/requiredMaxAge`` name what the resource asked for. Log in again asking for
        /// them (``AuthorizationRequest/acrValues``, ``AuthorizationRequest/maxAge``); the session
        /// does not refresh or retry on it (refreshed tokens keep the old authentication).
        public static let insufficientUserAuthentication = Code(.insufficientUserAuthentication)
        /// The system's random number generator failed.
        public static let randomFailure = Code(.randomFailure)
        /// OpenSSL failed unexpectedly.
        public static let cryptoFailure = Code(.cryptoFailure)
        /// A JWK is malformed, too weak, or not usable for the algorithm.
        public static let invalidKey = Code(.invalidKey)
        /// A JWS/JWT is not a well-formed compact serialization with JSON-object header and claims.
        public static let malformedToken = Code(.malformedToken)
        /// The token's `alg` is not allowed (`none`, HMAC without a configured secret, not on the list).
        public static let algorithmNotAllowed = Code(.algorithmNotAllowed)
        /// No key of the JWKS can verify the token (unknown `kid`, no key of the right type).
        public static let keyNotFound = Code(.keyNotFound)
        /// Several keys match a token without `kid`.
        public static let ambiguousKey = Code(.ambiguousKey)
        /// The signature does not verify.
        public static let invalidSignature = Code(.invalidSignature)
        /// A claim is missing or fails its rule (`aud`, `azp`, `iat`, `at_hash`, `auth_time`, `acr`, `amr`, …).
        public static let invalidClaim = Code(.invalidClaim)
        /// `exp` is in the past, beyond the leeway.
        public static let tokenExpired = Code(.tokenExpired)
        /// `nbf` or `iat` is in the future, beyond the leeway.
        public static let tokenNotYetValid = Code(.tokenNotYetValid)
        /// The ID token's `nonce` is not the one sent.
        public static let nonceMismatch = Code(.nonceMismatch)
        /// The ID token's audience does not contain the client id.
        public static let audienceMismatch = Code(.audienceMismatch)
    }

    /// An OAuth error as the provider sent it (RFC 6749 §4.1.2.1, §5.2).
    public struct ProviderError: Sendable, Equatable {
        /// The `error` value, such as `access_denied` or `invalid_grant`.
        public var error: String
        /// The provider's `error_description`, if any.
        public var errorDescription: String?
        /// The provider's `error_uri`, if any.
        public var errorURI: String?

        /// An OAuth error with its optional description and URI.
        public init(error: String, errorDescription: String? = nil, errorURI: String? = nil) {
            self.error = error
            self.errorDescription = errorDescription
            self.errorURI = errorURI
        }
    }

    /// What went wrong, to match against: `error.code == .stateMismatch`.
    public let code: Code
    /// What went wrong and what to do about it.
    public let message: String
    /// Non-secret details, such as `expected` and `found` for an issuer mismatch.
    public let context: [String: String]
    /// The provider's own error, for ``Code/providerError``.
    public let providerError: ProviderError?
    /// Why the login ended, when this error ended it: a session that deleted its login (a refresh
    /// the provider rejected, a host application that said nobody is signed in) says so here.
    public private(set) var endedLogin: LogoutReason?
    /// How long the server asked to wait before trying again, when it said: a `Retry-After` of a
    /// provider's answer (seconds or an HTTP date, at most an hour), or the delay a session was
    /// told to keep (``Code/temporarilyUnavailable``). ``context`` shows it as it came, as
    /// `retryAfter`.
    public private(set) var retryAfter: Duration?
    /// The `token_type` of a token response refused for it (one not accepted where it came, such as
    /// `Bearer` when DPoP was asked for), sanitised; ``context`` shows it as `token_type`.
    public private(set) var tokenType: String?
    /// The scopes a resource asked for in its 403 `insufficient_scope` challenge (RFC 6750 §3.1
    /// `scope`), for ``Code/insufficientScope``; `nil` when it named none. ``context`` shows them as
    /// `scope`.
    public private(set) var requiredScopes: [String]?
    /// The authentication context classes a resource asked for in its 401
    /// `insufficient_user_authentication` challenge (RFC 9470 §3 `acr_values`, space-separated
    /// there), for ``Code/insufficientUserAuthentication``; `nil` when it named none. ``context``
    /// shows them as `acr_values`.
    public private(set) var requiredACRValues: [String]?
    /// The most seconds since the user's authentication that the resource accepts (RFC 9470 §3
    /// `max_age`), for ``Code/insufficientUserAuthentication``; `nil` when it named none.
    /// ``context`` shows it as `max_age`.
    public private(set) var requiredMaxAge: Int?

    /// Whether the login is over and the user must log in again: show the login screen. `true`
    /// when this error ended the login (``endedLogin``) and for ``Code/notLoggedIn``; `false` for
    /// everything a retry can heal (the network, a 5xx, a store that failed once).
    ///
    /// ```swift
    /// do { response = try await session.send(request) } catch where error.endsLogin { showLoginScreen() }
    /// ```
    public var endsLogin: Bool { endedLogin != nil || code == .notLoggedIn }

    /// This error, with the wait the server asked for (``retryAfter``).
    package func retrying(after wait: Duration?) -> OIDCError {
        var error = self
        error.retryAfter = wait
        return error
    }

    /// This error, naming what a resource's `insufficient_user_authentication` asked for.
    package func requiring(acrValues: [String]?, maxAge: Int?) -> OIDCError {
        var error = self
        error.requiredACRValues = acrValues
        error.requiredMaxAge = maxAge
        return error
    }

    /// This error, naming the `token_type` that was refused (``tokenType``).
    package func refusing(tokenType type: String) -> OIDCError {
        var error = self
        error.tokenType = type
        return error
    }

    /// This error, naming the scopes a resource asked for (``requiredScopes``).
    package func requiring(scopes: [String]?) -> OIDCError {
        var error = self
        error.requiredScopes = scopes
        return error
    }

    /// This error, saying that it ended the login for `reason`.
    package func endingLogin(_ reason: LogoutReason) -> OIDCError {
        var error = self
        error.endedLogin = reason
        return error
    }

    /// What kind of problem this is, which follows from ``code``: decide on it whether to fix the
    /// configuration, log the user out, or try again later.
    public var category: Category { code.category }

    /// An error with a code, a message saying what went wrong and what to do, non-secret details and
    /// the provider's own error.
    ///
    /// - Important: never put a secret (token, code, verifier, client secret) in `message` or `context`.
    public init(
        _ code: Code, _ message: String, context: [String: String] = [:], providerError: ProviderError? = nil
    ) {
        self.code = code
        self.message = message
        self.context = context
        self.providerError = providerError
    }

    /// ``message``, followed by the ``context`` pairs sorted by key: `message (key: value, …)`;
    /// the message alone for ``Code/loginTimedOut``, whose message says all a person needs (its
    /// context is for programs: `startOpened`, `timeout`).
    public var description: String {
        guard !context.isEmpty, code != .loginTimedOut else { return message }
        let details = context.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: ", ")
        return "\(message) (\(details))"
    }

    /// The same text as ``description``, for `LocalizedError`.
    public var errorDescription: String? { description }
}

extension OIDCError {
    static func invalidArgument(_ message: String, context: [String: String] = [:]) -> OIDCError {
        OIDCError(.invalidArgument, message, context: context)
    }
}
