internal import Foundation
internal import Logging

extension RelyingParty {
    /// Before a login with a kept registration (``DiscoveredResource/ClientSource/storedRegistration``):
    /// asks the server whether it still knows the client, and registers anew when it does not.
    ///
    /// A server that forgot a client (expired it, was reset, deleted it) cannot say so during a
    /// browser login: it must not send the browser back to an unknown client's redirect URI (RFC
    /// 6749 §4.1.2.1), so the login would wait out its whole timeout. When the registration has a
    /// `registration_client_uri` and a `registration_access_token` (RFC 7592), they are read
    /// (`GET`, §2.1) first: a 401 (the client does not exist, or the token is no longer valid), a
    /// 404 or `invalid_client` means forgotten; the registration is removed from `registrations`,
    /// the client registered again with the same callback port, and the relying party for the new
    /// client returned (its ``protectedResource`` says ``DiscoveredResource/ClientSource/registered``).
    /// A 200 keeps the client (a new registration access token or secret in the answer is kept in
    /// `registrations`, as §2.1 requires); a 403 (the client exists and may not read itself),
    /// any other answer, no answer, or a registration without those two members says nothing:
    /// this relying party is returned as it is, and the login goes on with the kept client.
    ///
    /// ```swift
    /// let rp = try await RelyingParty.forResource(url, registrations: store).confirmingKeptRegistration(registrations: store)
    /// ```
    ///
    /// - Throws: what ``forResource(_:clientID:authorizationServer:registrations:clientName:callbackPort:transport:requestOptions:logger:configuration:)``
    ///   throws for the new registration; the store's errors. A failed read throws nothing.
    public func confirmingKeptRegistration(
        registrations: any RegistrationStore, transport: any HTTPTransport = NIOHTTPTransport.shared
    ) async throws(OIDCError) -> RelyingParty {
        guard let resource = protectedResource, resource.clientSource == .storedRegistration, let registration = resource.registration else {
            return self
        }
        let log = logger ?? OIDCLog.discovery
        switch await RegistrationRead.read(registration, transport: transport, options: tokenClient.requestOptions, logger: log) {
        case .unknown:
            return self
        case .known(let current):
            guard current != registration else { return self }
            // §2.1: a new registration access token or secret replaces the old at once.
            try await registrations.save(current)
            guard current.clientSecret != registration.clientSecret, let url = URL(string: resource.identifier.value) else { return self }
            return try await Self.forResource(
                url, authorizationServer: registration.issuer, registrations: registrations, clientName: resource.clientName,
                callbackPort: registration.callbackPort, transport: transport, requestOptions: tokenClient.requestOptions, logger: logger,
                configuration: configuration)
        case .forgotten(let status):
            guard let url = URL(string: resource.identifier.value) else { return self }
            log.notice(
                "the server no longer knows the registered client (RFC 7592 read); registering again",
                metadata: ["issuer": .issuer(registration.issuer), "status": .string(String(status))])
            try await registrations.remove(for: registration.issuer)
            return try await Self.forResource(
                url, authorizationServer: registration.issuer, registrations: registrations, clientName: resource.clientName,
                callbackPort: registration.callbackPort, transport: transport, requestOptions: tokenClient.requestOptions, logger: logger,
                configuration: configuration)
        }
    }
}
