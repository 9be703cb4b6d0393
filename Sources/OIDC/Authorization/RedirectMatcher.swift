public import Foundation

/// Says what a URL that reached the app is, compared with the configured redirect URI.
///
/// Apps hand the library whatever URL opened them: a custom scheme (`com.example.app:/callback`),
/// an https link the app claims, or a loopback URL. Scheme, host and port must equal the redirect
/// URI's (scheme and host case-insensitively); then the path decides:
/// - the redirect's own path: the authorization response;
/// - a path with a `bankId` component (the BankID app returning to the app): ignore it, keep waiting;
/// - a path with a `cancel` component: the user cancelled;
/// - anything else: not ours.
public struct RedirectMatcher: Sendable {
    /// What a URL is.
    public enum Match: Sendable, Equatable {
        /// The redirect URI's own path: an authorization response, to check as an ``AuthorizationResponse``.
        case authorizationResponse
        /// A path with a `bankId` component (the BankID app returning to the app): not an answer yet, keep
        /// waiting.
        case ignorable
        /// A path with a `cancel` component: the user cancelled the login.
        case cancelled
        /// Another scheme, host, port or path: not this login's redirect.
        case notOurs
    }

    private let scheme: String
    private let host: String
    private let port: Int?
    private let path: String

    /// A matcher for `redirectURI`, the redirect URI exactly as registered.
    ///
    /// - Throws: ``OIDCError/Code/invalidArgument`` if `redirectURI` is not an absolute URI, has a
    ///   fragment, or is http(s) without a host; ``OIDCError/Code/insecureEndpoint`` for plain http
    ///   off loopback.
    public init(redirectURI: String) throws(OIDCError) {
        try AuthorizationRequest.validateRedirectURI(redirectURI)
        guard let url = URL(string: redirectURI), let parts = Self.parts(of: url) else {
            throw .invalidArgument("The redirect URI '\(redirectURI)' is not an absolute URI.")
        }
        (scheme, host, port, path) = parts
    }

    /// What `url` is for this redirect URI.
    ///
    /// Scheme, host and port (default ports filled in) must equal the redirect URI's, scheme and host
    /// case-insensitively; then the percent-encoded path decides, as the type's overview lists.
    /// Nothing here looks at the query: ``AuthorizationResponse`` checks it.
    public func match(_ url: URL) -> Match {
        guard let (scheme, host, port, path) = Self.parts(of: url),
            scheme == self.scheme, host == self.host, port == self.port
        else { return .notOurs }
        if path == self.path { return .authorizationResponse }
        let components = path.split(separator: "/")
        if components.contains("bankId") { return .ignorable }
        if components.contains("cancel") { return .cancelled }
        return .notOurs
    }

    private static func parts(of url: URL) -> (String, String, Int?, String)? {
        guard let components = URLComponents(url: url, resolvingAgainstBaseURL: false),
            let scheme = components.scheme?.lowercased()
        else { return nil }
        let host = components.percentEncodedHost?.lowercased() ?? ""
        let defaultPort: Int? = switch scheme {
        case "https": 443
        case "http": 80
        default: nil
        }
        let port = components.port ?? defaultPort
        var path = components.percentEncodedPath
        if path.isEmpty { path = "/" }
        return (scheme, host, port, path)
    }
}

extension AuthorizationRequest {
    /// What a URL that reached the app meant for this login.
    public enum RedirectOutcome: Sendable {
        /// The provider sent the user back with a code; exchange it.
        case authorized(AuthorizationResponse)
        /// An intermediate redirect (BankID returning to the app): keep waiting.
        case ignored
        /// The user cancelled.
        case cancelled
        /// Not this login's redirect at all; leave it to someone else.
        case notOurs
    }

    /// Classifies a URL with a ``RedirectMatcher`` for ``redirectURI`` and, for the redirect itself,
    /// checks it as an ``AuthorizationResponse``.
    ///
    /// - Throws: what ``AuthorizationResponse/init(callbackURL:request:)`` throws.
    public func handleRedirect(_ url: URL) throws(OIDCError) -> RedirectOutcome {
        switch try RedirectMatcher(redirectURI: redirectURI).match(url) {
        case .authorizationResponse: .authorized(try AuthorizationResponse(callbackURL: url, request: self))
        case .ignorable: .ignored
        case .cancelled: .cancelled
        case .notOurs: .notOurs
        }
    }
}
