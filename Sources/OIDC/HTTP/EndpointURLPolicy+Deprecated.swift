public import Foundation

/// Which URLs may carry OAuth traffic (https everywhere, plain http only to loopback hosts): the
/// library's own rule, which it applies by itself to every endpoint; public by mistake.
@available(*, deprecated, message: "EndpointPolicy is internal plumbing and will be removed; the library checks every endpoint it is given or discovers by itself")
public enum EndpointPolicy {
    /// Whether `host` is a loopback IP literal or `localhost`.
    public static func isLoopback(host: String) -> Bool { EndpointURLPolicy.isLoopback(host: host) }

    /// Checks that an endpoint is absolute, has no fragment, and is https (or http on loopback).
    ///
    /// - Throws: ``OIDCError/Code/insecureEndpoint`` or ``OIDCError/Code/invalidArgument``.
    public static func validate(_ url: URL, role: String) throws(OIDCError) { try EndpointURLPolicy.validate(url, role: role) }
}
