internal import Foundation

extension RelyingParty {
    /// What a request must keep of this relying party's settings, whatever a `configure` closure did:
    /// its DPoP key when DPoP is on (else the tokens would come back unbound); what the security
    /// profile requires of it (`SecurityProfile.check(_:sending:)`), before it is sent (`sending`)
    /// or its code exchanged.
    ///
    /// - Throws: ``OIDCError/Code/invalidArgument`` for a request without its DPoP key;
    ///   ``OIDCError/Code/profileViolation`` for one the profile refuses.
    func checkSettings(of request: AuthorizationRequest, sending: Bool) throws(OIDCError) {
        try requireDPoPKey(of: request)
        try configuration.securityProfile.check(request, sending: sending)
    }
}
