internal import Foundation
internal import Logging

/// Step 5 of discovery from a resource: the client a login uses at the chosen server.
struct ResourceClient {
    var id: String
    var source: DiscoveredResource.ClientSource
    var registration: ClientRegistration?

    /// A given id as is; an https id as a Client ID Metadata Document URL when the server
    /// advertises `client_id_metadata_document_supported`; else the registration kept for `issuer`
    /// (unless its secret expired), else a new RFC 7591 registration, kept.
    static func choose(
        clientID: String?, issuer: String, metadata: ProviderMetadata, registrations: any RegistrationStore, clientName: String,
        callbackPort: Int?, transport: any HTTPTransport, options: HTTPRequestOptions, logger: Logger
    ) async throws(OIDCError) -> ResourceClient {
        let takesDocuments = metadata.raw["client_id_metadata_document_supported"]?.boolValue == true
        if let clientID {
            guard clientID.lowercased().hasPrefix("https://") else { return ResourceClient(id: clientID, source: .given) }
            guard takesDocuments else {
                throw OIDCError(
                    .invalidArgument,
                    "The client id is a Client ID Metadata Document URL, and the server \(issuer) does not say client_id_metadata_document_supported.",
                    context: ["issuer": issuer, "rule": "client_id_metadata_document_supported"])
            }
            return ResourceClient(id: clientID, source: .metadataDocument)
        }
        // Looked for and made under the store's lock: two first logins at once register one client.
        return try await locked(registrations, issuer) { () async throws(OIDCError) in
            try await keptOrRegistered(
                issuer: issuer, metadata: metadata, registrations: registrations, clientName: clientName, callbackPort: callbackPort,
                transport: transport, options: options, logger: logger)
        }
    }

    /// `body` under the registration lock of `issuer` in `registrations`, its errors as `OIDCError`.
    static func locked<T: Sendable>(
        _ registrations: any RegistrationStore, _ issuer: String, _ body: @Sendable () async throws(OIDCError) -> T
    ) async throws(OIDCError) -> T {
        do {
            return try await registrations.withRegistrationLock(for: issuer) { try await body() }
        } catch let error as OIDCError { throw error } catch is CancellationError {
            throw OIDCError(.cancelled, "The login was cancelled while waiting for another login's registration at \(issuer).", context: ["issuer": issuer])
        } catch {
            throw OIDCError(.storageFailure, "The registration of a client at \(issuer) could not be locked: \(error)", context: ["issuer": issuer])
        }
    }

    /// The registration kept for `issuer` (unless its secret expired), else a new one, kept.
    private static func keptOrRegistered(
        issuer: String, metadata: ProviderMetadata, registrations: any RegistrationStore, clientName: String,
        callbackPort: Int?, transport: any HTTPTransport, options: HTTPRequestOptions, logger: Logger
    ) async throws(OIDCError) -> ResourceClient {
        if var stored = try await registrations.registration(for: issuer), !stored.isExpired(at: Date()) {
            logger.debug("reusing the client registered earlier", metadata: ["issuer": .issuer(issuer)])
            // A configuration endpoint an earlier version kept on another origin gets no RFC 7592 read.
            stored.registrationClientURI = ClientConfigurationURI.accepted(
                stored.registrationClientURI, registrationEndpoint: metadata.registrationEndpoint, issuer: issuer, logger: logger)
            return ResourceClient(id: stored.clientID, source: .storedRegistration, registration: stored)
        }
        guard let endpoint = metadata.registrationEndpoint else {
            throw OIDCError(
                .missingParameter,
                "No client id was given and the authorization server \(issuer) offers no registration_endpoint (RFC 7591); register a client there and pass its id.",
                context: ["issuer": issuer, "rule": "registration_endpoint"])
        }
        var port = callbackPort ?? 0
        if port == 0 { port = try await LoopbackPorts.free() }
        // The device grant too when the server offers it (RFC 8628), so that a device login can
        // use the registration: servers hold a client to its grant_types (RFC 7591 §2). Not
        // otherwise: some servers refuse grant types they do not know.
        let offersDevice = metadata.deviceAuthorizationEndpoint != nil || metadata.advertised.grantTypesSupported?.contains(DynamicRegistration.deviceGrantType) == true
        let redirectURI = "http://127.0.0.1:\(port)/callback"
        let registration: ClientRegistration
        do {
            registration = try await DynamicRegistration.register(
                at: endpoint, issuer: issuer, redirectURI: redirectURI, clientName: clientName, deviceGrant: offersDevice,
                transport: transport, options: options, logger: logger)
        } catch where offersDevice && error.providerError?.error == "invalid_client_metadata" {
            // A server that offers the device flow yet refuses its grant type in a registration
            // (glewlwyd 2.7.5 knows it only as `device_authorization`): one registration without it.
            logger.notice(
                "the registration with the device grant was refused (invalid_client_metadata); registering without it",
                metadata: ["issuer": .issuer(issuer)])
            registration = try await DynamicRegistration.register(
                at: endpoint, issuer: issuer, redirectURI: redirectURI, clientName: clientName, deviceGrant: false,
                transport: transport, options: options, logger: logger)
        }
        try await registrations.save(registration)
        return ResourceClient(id: registration.clientID, source: .registered, registration: registration)
    }
}

/// A free loopback port, found by binding 127.0.0.1 on port 0 and closing again: what a new
/// registration's redirect URI names, and later logins bind.
enum LoopbackPorts {
    static func free() async throws(OIDCError) -> Int {
        let listener = try await LoopbackRedirectListener.start(LoopbackRedirectListener.Configuration())
        let port = listener.port
        await listener.close()
        return port
    }
}
