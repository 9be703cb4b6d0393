public import Logging
public import OIDC

/// What a protected route requires of a request's access token: its scopes, the user's
/// authentication (RFC 9470), and rich authorization detail types (RFC 9396). The framework
/// middlewares (OIDCHummingbird's and OIDCVapor's `RequireAccess`) hold one each and ask the kit
/// with ``ResourceServer/verify(method:target:authority:headers:scheme:peerCertificate:meeting:logger:)``.
public struct AccessRequirement: Sendable, Hashable {
    /// The scopes the token must grant, all of them; none: any valid token.
    public var scopes: Set<String>
    /// How strong and how recent the user's authentication must be (`acr`, `auth_time`); `nil`: any.
    public var authentication: AuthenticationRequirement?
    /// A rich authorization detail of each of these types the token must hold; empty: none.
    public var authorizationDetailTypes: Set<String>

    /// A requirement of these scopes, this authentication and these detail types.
    public init(scopes: Set<String> = [], authentication: AuthenticationRequirement? = nil, authorizationDetailTypes: Set<String> = []) {
        self.scopes = scopes
        self.authentication = authentication
        self.authorizationDetailTypes = authorizationDetailTypes
    }
}

extension ResourceServer {
    /// The one step a framework middleware takes per request: the kit's request from what the
    /// server received (``request(method:target:authority:headers:scheme:peerCertificate:)``, the
    /// URL a DPoP proof names), verified against `requirement`, and the decision logged on `logger`
    /// in the words of ``AccessLog``: a refusal at `info`, an accepted request at `debug`.
    /// `peerCertificate` is the DER of the client's TLS certificate, for certificate-bound tokens
    /// (RFC 8705) on a server that terminates TLS itself.
    ///
    /// - Throws: ``AccessRefusal``, whose status, headers and body are the answer.
    public func verify(
        method: String, target: String, authority: String? = nil, headers: HTTPHeaders, scheme: String = "http", peerCertificate: [UInt8]? = nil,
        meeting requirement: AccessRequirement, logger: Logger
    ) async throws(AccessRefusal) -> VerifiedAccess {
        let path = String(target.prefix { $0 != "?" })
        do throws(AccessRefusal) {
            let checked = try request(
                method: method, target: target, authority: authority, headers: headers, scheme: scheme, peerCertificate: peerCertificate)
            let access = try await verify(
                checked, requiring: requirement.scopes, authentication: requirement.authentication,
                authorizationDetailTypes: requirement.authorizationDetailTypes)
            logger.debug("\(AccessLog.accepted(access, method: method, path: path))")
            return access
        } catch {
            logger.info("\(AccessLog.refused(error, method: method, path: path))")
            throw error
        }
    }
}
