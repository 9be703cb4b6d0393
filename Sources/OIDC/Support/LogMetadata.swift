internal import Foundation
package import Logging

/// The loggers the library uses when a caller passes none: they discard everything, and since
/// swift-log builds a message and its metadata only for a level the handler accepts, a disabled
/// logger costs one level check per call site.
///
/// One label per component (`oidc.transport`, `oidc.session`, …) rather than one label with a
/// component field: a handler such as the `oidc` command's prints the label, and a server can give
/// each component its own level with the swift-log bootstrap it already has.
enum OIDCLog {
    static let transport = disabled("oidc.transport")
    static let discovery = disabled("oidc.discovery")
    static let token = disabled("oidc.token")
    static let jwks = disabled("oidc.jwks")
    static let session = disabled("oidc.session")
    static let store = disabled("oidc.store")
    static let loopback = disabled("oidc.loopback")

    static func disabled(_ label: String) -> Logger {
        Logger(label: label, factory: { _ in SwiftLogNoOpLogHandler() })
    }
}

/// The only ways the library makes log metadata: from values that are not secrets by their type
/// (numbers, durations, error codes, sanitised URLs, sanitised provider text). A token, a
/// code, a verifier, a client secret, a header value or a callback URL's query has no constructor
/// here, so no call site can log one by forgetting to redact it.
extension Logger.MetadataValue {
    /// `scheme://host[:port]/path`: never the user info, the query (a callback's code and state,
    /// an end-session URL's `id_token_hint`) or the fragment.
    static func endpoint(_ url: URL) -> Self {
        .string(LogRedaction.endpoint(url))
    }

    /// Text from outside (a provider's error code, a key id, an issuer from a document): control
    /// characters replaced, at most 64 characters, so it cannot forge or break a log line.
    package static func untrusted(_ text: String, limit: Int = 64) -> Self {
        .string(UntrustedText.sanitized(text, limit: limit))
    }

    /// An issuer as configured, through the same sanitiser as ``endpoint(_:)`` (an issuer is a URL
    /// without query; user info would still be dropped).
    static func issuer(_ issuer: String) -> Self {
        guard let url = URL(string: issuer), url.scheme != nil, url.host != nil else { return .untrusted(issuer, limit: 256) }
        let sanitized = LogRedaction.endpoint(url)
        // `https://id.example` stays as written, not `https://id.example/`.
        return .string(issuer.hasSuffix("/") || !sanitized.hasSuffix("/") ? sanitized : String(sanitized.dropLast()))
    }

    /// A count, a status, an attempt.
    static func int(_ value: Int) -> Self { .stringConvertible(value) }

    /// Whole milliseconds since `start`.
    package static func milliseconds(since start: ContinuousClock.Instant) -> Self {
        .stringConvertible(LogRedaction.milliseconds(ContinuousClock.now - start))
    }

    /// Whole seconds, rounded.
    static func seconds(_ value: TimeInterval) -> Self {
        .stringConvertible(value.isFinite ? Int(value.rounded()) : 0)
    }

    /// `true` or `false`.
    static func bool(_ value: Bool) -> Self { .string(value ? "true" : "false") }

    /// The error's code (`invalidGrant` is the OAuth code, in ``oauthError(_:)``), never its
    /// provider-supplied text.
    package static func code(_ error: OIDCError) -> Self { .string(error.code.description) }

    /// An RFC 3339 instant, UTC, whole seconds.
    static func instant(_ date: Date) -> Self {
        .string(date.formatted(.iso8601))
    }
}

extension Logger.Metadata {
    /// `error` (the code) and, when the provider sent one, `oauth_error` and `status`, from an
    /// error's non-secret fields; the provider's text (which may echo what was sent) is left out.
    package static func failure(_ error: OIDCError) -> Self {
        var metadata: Self = ["error": .code(error)]
        if let oauth = error.providerError?.error { metadata["oauth_error"] = .untrusted(oauth) }
        if let status = error.context["status"] { metadata["status"] = .untrusted(status) }
        return metadata
    }
}

enum LogRedaction {
    /// `scheme://host[:port]/path` of `url`, with nothing after the path and no user info.
    static func endpoint(_ url: URL) -> String {
        guard let components = URLComponents(url: url, resolvingAgainstBaseURL: false), let scheme = components.scheme,
            let host = components.percentEncodedHost
        else { return "<unparsable URL>" }
        let port = components.port.map { ":\($0)" } ?? ""
        let path = components.percentEncodedPath
        return UntrustedText.sanitized("\(scheme.lowercased())://\(host.lowercased())\(port)\(path.isEmpty ? "/" : path)", limit: 256)
    }

    static func milliseconds(_ duration: Duration) -> Int {
        let (seconds, attoseconds) = duration.components
        return Int(seconds) * 1000 + Int(attoseconds / 1_000_000_000_000_000)
    }
}
