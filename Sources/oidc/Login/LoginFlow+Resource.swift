import ArgumentParser
import Foundation
import OIDC

/// `oidc login --resource URL`: a login that starts from a protected resource's URL alone (an MCP
/// server's endpoint). The library finds the issuer (RFC 9728, RFC 8414, OpenID discovery), the
/// client (`--client-id` as given, else the registration kept for that issuer in the store's
/// `registrations` directory, else a new RFC 7591 registration kept there for every profile), and
/// sends the resource's identifier as `resource` (RFC 8707) with every request; what is here is the
/// CLI's part: the flags' checks, where registrations are kept, the loopback port, one new
/// registration when the server refuses the kept one.
enum ResourceLogin {
    /// The `client_name` of the registrations oidc makes.
    static let clientName = "oidc"

    /// The checks of `--resource` that need no network: an absolute http(s) URL (the library
    /// holds it to the rules of a resource identifier), no preset, and not given twice.
    static func validate(resource: String, provider: AuthorizationOptions.Provider?, parameters: [String]) throws {
        // A user or password in the URL is refused without repeating the URL (it would show them).
        if let url = URL(string: resource), url.user != nil || url.password != nil {
            throw ValidationError("--resource: a resource identifier has no user or password (RFC 8707 §2); give the URL without them")
        }
        guard let url = URL(string: resource), let scheme = url.scheme?.lowercased(), ["http", "https"].contains(scheme), url.host != nil else {
            throw ValidationError("--resource needs an absolute https URL (http only on loopback), not '\(UntrustedText.sanitized(resource, limit: 200))'")
        }
        if url.fragment != nil { throw ValidationError("--resource: a resource identifier has no fragment (RFC 8707 §2)") }
        do { _ = try ResourceIdentifier(url) } catch { throw ValidationError("--resource: \(error.message)") }
        if let provider, provider != .generic { throw ValidationError("--resource finds its provider itself: it does not go with --provider \(provider.rawValue)") }
        if try AuthorizationOptions.parseParameters(parameters).contains(where: { $0.name == "resource" }) {
            throw ValidationError("--param resource=… and --resource: give the resource once, with --resource")
        }
    }

    /// Where registrations are kept: beside the logins of the store, so that every profile of the
    /// store shares them (one file per issuer, 0600, in a 0700 directory).
    static func registrations(in keychain: FileKeychain) throws -> FileRegistrationStore {
        try FileRegistrationStore(directory: keychain.directory.appendingPathComponent("registrations", isDirectory: true))
    }
}

/// `oidc login --new-registration`: the store's registrations, with the kept one of the issuer
/// passed over, so that a new registration is made and replaces it (for every profile). For a
/// server that forgot the client, which its sign-in page says, where oidc cannot see it.
struct NewRegistrationStore: RegistrationStore {
    let base: FileRegistrationStore

    func registration(for issuer: String) async throws(OIDCError) -> ClientRegistration? { nil }

    func save(_ registration: ClientRegistration) async throws(OIDCError) { try await base.save(registration) }

    func remove(for issuer: String) async throws(OIDCError) { try await base.remove(for: issuer) }

    func withRegistrationLock<T: Sendable>(for issuer: String, _ body: @Sendable () async throws -> T) async throws -> T {
        try await base.withRegistrationLock(for: issuer, body)
    }
}

extension LoginFlow {
    /// The relying party of the profile's `--resource`: its issuer the one `--issuer` names among
    /// the resource's authorization servers, else the first; its client `--client-id`, else the
    /// store's registration for that issuer, else a new one naming the `--listen` port when one is
    /// fixed (a free port otherwise, kept with the registration so that later logins bind it).
    func resourceRelyingParty(_ resource: String, transport: NIOHTTPTransport) async throws -> RelyingParty {
        guard let url = URL(string: resource) else { throw ValidationError("--resource is not a URL") }
        if clientSecret != nil || profile.privateKeyFile != nil {
            throw ValidationError(
                "--resource logs in as a public client (PKCE, RFC 8252): a client secret or private key does not go with it; for a confidential client use --issuer URL --client-id ID --param resource=\(UntrustedText.sanitized(resource, limit: 200))")
        }
        var configuration = RelyingParty.Configuration()
        try profile.configure(&configuration, provider: ProviderConfiguration(issuer: profile.issuer ?? resource, authorizationEndpoint: nil))
        let kept = try ResourceLogin.registrations(in: keychain)
        let registrations: any RegistrationStore = newRegistration ? NewRegistrationStore(base: kept) : kept
        // --issuer when given (remembered), else the issuer of the profile's first login (trust on first use).
        let requested = profile.issuer ?? profile.resourceIssuer
        var port = try fixedListenPort()
        let rp: RelyingParty
        do {
            if newRegistration, port == nil, try !listensOnAnyPort() {
                // The new registration keeps the port of the one it replaces: the one kept for the issuer
                // this login uses (found from the resource first), whichever profile or login made it;
                // unless --listen asks for any port (the old one may be taken).
                let issuer = try await RelyingParty.authorizationServer(
                    forResource: url, requested: requested, transport: transport, requestOptions: HTTPRequestOptions(timeout: .seconds(15)),
                    logger: CLILog.logger(.discovery))
                port = try await kept.registration(for: issuer)?.callbackPort
            }
            rp = try await RelyingParty.forResource(
                url, clientID: profile.clientID, authorizationServer: requested, registrations: registrations,
                clientName: ResourceLogin.clientName, callbackPort: port, transport: transport,
                requestOptions: HTTPRequestOptions(timeout: .seconds(15)), logger: CLILog.logger(.discovery), configuration: configuration
            )
        } catch let error as OIDCError {
            throw switchedServer(error, resource: resource) ?? error
        }
        // A resource that takes only DPoP-bound tokens: the library turned DPoP on (a new key kept
        // with the login, as --dpop); the profile remembers it. An explicit --no-dpop would get
        // bearer tokens the resource refuses: said before anyone signs in.
        if rp.protectedResource?.dpopBoundAccessTokensRequired == true, !profile.dpop {
            if dpopRefused {
                throw ValidationError(
                    "\(UntrustedText.sanitized(resource, limit: 200)) takes only DPoP-bound tokens (its metadata says dpop_bound_access_tokens_required, RFC 9728): add --dpop")
            }
            Console.error(
                "oidc: \(UntrustedText.sanitized(resource, limit: 200)) takes only DPoP-bound tokens (dpop_bound_access_tokens_required, RFC 9728): DPoP on, as --dpop (a new key kept with the login; remembered)")
        }
        return rp
    }

    /// A resource that no longer lists the issuer this profile signed in at first (``Profile/resourceIssuer``,
    /// trust on first use): refused, naming both servers and how to accept the new one. `nil` for
    /// any other `error`, and when `--issuer` names the server (the library's refusal says it).
    func switchedServer(_ error: OIDCError, resource: String) -> OIDCError? {
        guard profile.issuer == nil, let remembered = profile.resourceIssuer, error.code == .resourceMismatch,
            error.context["issuer"] == remembered, let listed = error.context["listed"]
        else { return nil }
        let shownResource = UntrustedText.sanitized(resource, limit: 200)
        let newServer = listed.split(separator: " ").first.map(String.init) ?? "NEW-ISSUER"
        let name = ProfileName.shown(profileName)
        return OIDCError(
            .resourceMismatch,
            "The resource \(shownResource) now names the authorization server \(listed), no longer \(remembered), where profile '\(name)' signed in first (oidc remembers it). The login is refused: a resource that changes its server may have been taken over, and you would sign in at the new one. If the change is expected, accept the new server with: oidc login --profile \(name) --resource \(shownResource) --issuer \(newServer) (or log in with a new profile).",
            context: ["resource": shownResource, "issuer": remembered, "listed": listed, "rule": "the profile's authorization server (trust on first use)"])
    }

    /// A taken callback port of a registered client, said with why it is fixed (the registration
    /// names it in its redirect URI, which the server matches) and the two ways out: free it, or
    /// register anew on a free port (`--listen 127.0.0.1:0`). Any other `error` as it is.
    func registeredPortInUse(_ error: OIDCError, _ rp: RelyingParty) -> OIDCError {
        guard error.code == .portInUse, let registration = rp.protectedResource?.registration, let port = registration.callbackPort else { return error }
        return OIDCError(
            .portInUse,
            "Port \(port) on 127.0.0.1 is in use by another program, and the client oidc registered at \(rp.provider.issuer) has its redirect URI on that port (http://127.0.0.1:\(port)/callback; the server may match it exactly), so the login must listen there. When another oidc login holds it (logins with this registration share the port), run this again once that one ends. Otherwise stop the program that holds port \(port), or register anew on a free port (for every profile that uses this registration): oidc login --profile \(profileName) --new-registration --listen 127.0.0.1:0")
    }

    /// Whether the first `--listen` endpoint names port 0: a new registration then names a free
    /// port, not the port of the registration it replaces.
    func listensOnAnyPort() throws -> Bool {
        guard let first = profile.listen.first else { return false }
        do throws(OIDCError) { return try LoopbackRedirectListener.Endpoint(parsing: first).port == 0 } catch {
            throw ValidationError("--listen: \(error.message)")
        }
    }

    /// The port of the first `--listen` endpoint when it names one (not 0).
    func fixedListenPort() throws -> Int? {
        guard let first = profile.listen.first else { return nil }
        do throws(OIDCError) {
            let port = try LoopbackRedirectListener.Endpoint(parsing: first).port
            return port == 0 ? nil : port
        } catch {
            throw ValidationError("--listen: \(error.message)")
        }
    }

    /// The login of a `--resource` profile (`flow` the browser's or the device's): a kept
    /// registration confirmed first (RFC 7592 read: one the server forgot is made anew, said on
    /// stderr); when the server refuses a kept registration (`invalid_client`), it is made again
    /// and the login run once more; a browser login that times out with a kept registration says
    /// the server may have forgotten it, and names `--new-registration`.
    func resourceLogin(_ rp: RelyingParty, _ flow: (RelyingParty) async throws -> StoredLogin) async throws -> StoredLogin {
        var rp = rp
        if rp.protectedResource?.clientSource == .storedRegistration {
            rp = try await rp.confirmingKeptRegistration(registrations: try ResourceLogin.registrations(in: keychain), transport: rp.transport)
            if rp.protectedResource?.clientSource == .registered {
                let port = rp.protectedResource?.callbackPort.map { " (callback port \($0), as before)" } ?? ""
                Console.error("oidc: \(rp.provider.issuer) no longer knows the client registered earlier (reading its registration was refused, RFC 7592): registered anew\(port)")
            }
        }
        do {
            return try await flow(rp)
        } catch let error as OIDCError {
            guard rp.protectedResource?.clientSource == .storedRegistration else { throw error }
            if error.code == .loginTimedOut, error.context["startOpened"] == "true" {
                throw OIDCError(
                    .loginTimedOut,
                    "\(error.message) If you signed in and the browser never came back, \(rp.provider.issuer) may have forgotten the client oidc registered there earlier (a server does not send the browser back to a client it does not know): register anew with oidc login --profile \(profileName) --new-registration")
            }
            guard let fresh = try await rp.replacingRefusedRegistration(after: error, registrations: try ResourceLogin.registrations(in: keychain), transport: rp.transport)
            else { throw error }
            Console.error("oidc: \(rp.provider.issuer) refused the client registered earlier (invalid_client): registered anew; sign in once more")
            return try await flow(fresh)
        }
    }

    /// The browser login of a `--resource` profile: the registered port bound (unless `--listen`
    /// names the endpoints), at a plain OAuth server without an ID token.
    func resourceBrowserLogin(_ rp: RelyingParty) async throws -> StoredLogin {
        try await resourceLogin(rp) { rp in try await resourceBrowserLoginOnce(rp) }
    }

    private func resourceBrowserLoginOnce(_ rp: RelyingParty) async throws -> StoredLogin {
        let profile = self.profile
        var login = rp.loopbackLogin(scopes: scopes)
        if let registered = rp.protectedResource?.callbackPort {
            if let fixed = try fixedListenPort(), fixed != registered {
                throw ValidationError(
                    "--listen names port \(fixed), and the client registered at \(rp.provider.issuer) has its redirect URI on port \(registered); leave out --listen, or give port \(registered)")
            }
            if profile.listen.count > 1 { login.listener.endpoints = try listenEndpoints() }
        } else if !profile.listen.isEmpty {
            login.listener.endpoints = try listenEndpoints()
        }
        login.logger = CLILog.logger(.loopback)
        login.timeout = timeout
        login.browser = launcher()
        login.configure = { request throws(OIDCError) in try profile.configure(&request) }
        let timeout = self.timeout
        let finished: StoredLogin
        do {
            finished = try await login.runLogin { start in
                Console.error("oidc: sign in at \(rp.provider.issuer) in your browser: \(start.absoluteString)")
                Console.error("oidc: waiting for the browser to come back to \(Self.callback(of: start)) (for \(timeout.components.seconds) s; Ctrl-C to cancel)")
            }
        } catch {
            throw registeredPortInUse(error, rp)
        }
        var stored = finished
        stored.attributes = stored.attributes.merging(attributes) { $1 }
        return try await rp.save(stored, in: keychain, as: key)
    }
}
