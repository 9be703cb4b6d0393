internal import OIDC

extension ResourceServer {
    /// ``verify(_:requiring:authentication:)``, and that the token grants a rich authorization
    /// detail (RFC 9396) of each type in `authorizationDetailTypes`: a payment route requires a
    /// `payment_initiation` detail, whose members (amount, creditor) it then reads with
    /// ``VerifiedAccess/authorizationDetails(ofType:)``. A token without one is refused with 403
    /// `insufficient_scope` (RFC 9396 names no error of its own; the token lacks a privilege the
    /// request needs), rule ``AccessRefusal/Rule/missingAuthorizationDetail``.
    ///
    /// ```swift
    /// let access = try await server.verify(request, authorizationDetailTypes: ["payment_initiation"])
    /// let payment = access.authorizationDetails(ofType: "payment_initiation")[0]
    /// ```
    ///
    /// - Throws: ``AccessRefusal``, as ``verify(_:requiring:authentication:)`` does, and for a missing type.
    public func verify(
        _ request: ResourceRequest, requiring scopes: Set<String> = [], authentication: AuthenticationRequirement? = nil,
        authorizationDetailTypes: Set<String>
    ) async throws(AccessRefusal) -> VerifiedAccess {
        let access = try await verify(request, requiring: scopes, authentication: authentication)
        let granted = Set(access.authorizationDetails.compactMap { $0.objectValue?["type"]?.stringValue })
        guard authorizationDetailTypes.isSubset(of: granted) else {
            let missing = authorizationDetailTypes.subtracting(granted).sorted()
            var denial = Denial(
                .missingAuthorizationDetail, .insufficientScope,
                "The access token's authorization_details hold no detail of the type\(missing.count == 1 ? "" : "s") this request requires: \(missing.joined(separator: ", ")) (RFC 9396).")
            denial.scope = scopes
            let scheme: Denial.Scheme = switch access.binding {
            case .bearer, .certificate: .bearer
            case .dpop, .dpopAndCertificate: .dpop
            }
            throw challenges.refusal(denial, usedScheme: scheme, now: configuration.now())
        }
        return access
    }
}
