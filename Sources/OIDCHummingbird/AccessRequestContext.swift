public import Hummingbird
public import OIDCResourceServer

/// A request context that carries the access a ``RequireAccess`` middleware verified, for the
/// handlers of the routes behind it. Conform your own context to it, or use
/// ``BasicAccessRequestContext``.
public protocol AccessRequestContext: RequestContext {
    /// The verified access token (subject, client, scopes, binding); set by ``RequireAccess``,
    /// `nil` on a route it does not protect.
    var access: VerifiedAccess? { get set }
}

extension AccessRequestContext {
    /// The verified access of a protected route's request.
    ///
    /// - Throws: `HTTPError(.internalServerError)` when no ``RequireAccess`` protects this route: a
    ///   mistake in the routes, never a client's.
    public var verifiedAccess: VerifiedAccess {
        get throws {
            guard let access else {
                throw HTTPError(.internalServerError, message: "This route reads the verified access, but no RequireAccess middleware protects it.")
            }
            return access
        }
    }
}

/// Hummingbird's basic request context, plus the verified access.
public struct BasicAccessRequestContext: AccessRequestContext {
    /// Hummingbird's storage: logger, allocator, parameters.
    public var coreContext: CoreRequestContextStorage
    /// The verified access token, set by ``RequireAccess``.
    public var access: VerifiedAccess?

    /// A context for a request from `source`.
    public init(source: Source) {
        coreContext = .init(source: source)
    }
}
