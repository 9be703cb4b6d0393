internal import Foundation
public import OIDC

/// The other end of the token: checks the access token (and its proof of possession) a request
/// carries, for an API written with any server framework.
///
/// Built once from a ``Configuration`` and shared: ``verify(_:requiring:authentication:)`` is safe to call from
/// many tasks at once and takes no lock on its common path but short ones (a key snapshot, the
/// replay store).
///
/// ```swift
/// let server = try ResourceServer(.init(
///     resource: URL(string: "https://api.example/orders")!,
///     issuers: [TrustedIssuer(issuer: "https://idp.example", jwksURI: jwksURL, transport: NIOHTTPTransport())]
/// ))
/// do {
///     let access = try await server.verify(ResourceRequest(method: method, url: url, headers: headers),
///                                          requiring: ["orders:read"])
///     // access.subject, access.clientID, access.scopes, access.binding; send access.responseHeaders
/// } catch {
///     // answer error.status with error.headers (WWW-Authenticate, DPoP-Nonce)
/// }
/// ```
///
/// What it checks: JWT access tokens as RFC 9068 §4 says (``Configuration``), opaque tokens by
/// introspection (RFC 7662, ``IntrospectionSettings``), DPoP proofs (RFC 9449 §4.3, §7, §8, with
/// replay through the ``Configuration/replayStore``), certificate-bound tokens (RFC 8705 §3), and
/// each route's scopes. A refusal (``AccessRefusal``) names the rule and carries the exact
/// challenge to send (RFC 6750 §3, RFC 9449 §7.1, RFC 9728 §5.1).
public final class ResourceServer: Sendable {
    /// The configuration the server was built with.
    public let configuration: Configuration
    private let jwt: JWTAccessTokenCheck
    private let proofs: DPoPProofVerifier
    private let introspection: IntrospectionCache?
    let challenges: Challenges
    /// ``Configuration/publicOrigin``, as the addressed URLs are built from it.
    let publicOrigin: String?

    /// A server for `configuration`.
    ///
    /// - Throws: `OIDCError` (`invalidArgument`) for a configuration that cannot be right: no
    ///   issuer and no introspection, an issuer listed twice, a resource that is not an absolute
    ///   `https` URL (or `http` on loopback) without query and fragment, an HMAC or empty
    ///   algorithm list, a negative leeway or proof age.
    public init(_ configuration: Configuration) throws(OIDCError) {
        try Self.validate(configuration)
        self.configuration = configuration
        var issuers: [String: IssuerKeys] = [:]
        for trusted in configuration.issuers { issuers[trusted.issuer] = IssuerKeys(trusted) }
        jwt = JWTAccessTokenCheck(
            issuers: issuers, algorithms: configuration.algorithms, audiences: configuration.audiences,
            acceptsUntypedTokens: configuration.acceptsUntypedTokens, requiredClaims: configuration.requiredClaims,
            leeway: configuration.leeway, maximumLength: configuration.maximumTokenLength
        )
        proofs = DPoPProofVerifier(
            algorithms: configuration.dpop.algorithms, maximumAge: configuration.dpop.maximumProofAge, leeway: configuration.dpop.proofLeeway,
            maximumLength: configuration.dpop.maximumProofLength
        )
        introspection = configuration.introspection.map(IntrospectionCache.init)
        challenges = Challenges(configuration)
        publicOrigin = configuration.publicOrigin.flatMap { try? AddressedURL.origin($0).get() }
    }

    /// `denial` as the answer to send, with this server's challenges.
    func refusal(_ denial: Denial) -> AccessRefusal {
        challenges.refusal(denial, usedScheme: nil, now: configuration.now())
    }

    /// This resource's RFC 9728 metadata, from the configuration.
    public var metadata: ProtectedResourceMetadata {
        let dpop = configuration.dpop
        return ProtectedResourceMetadata(
            resource: configuration.resource,
            authorizationServers: configuration.issuers.map(\.issuer)
                + (configuration.introspection.map { [$0.client.provider.issuer] } ?? []).filter { issuer in
                    !configuration.issuers.contains { $0.issuer == issuer }
                },
            scopesSupported: configuration.scopesSupported,
            dpopSigningAlgorithms: dpop.mode == .off ? [] : JWSAlgorithm.allCases.filter { dpop.algorithms.contains($0) && !$0.isHMACAlgorithm },
            dpopBoundAccessTokensRequired: dpop.mode == .required
        )
    }

    /// Checks the access token `request` carries, its proof of possession, that it grants `scopes`,
    /// and that the user's authentication behind it meets `authentication`.
    ///
    /// - Parameters:
    ///   - request: the request, as received.
    ///   - scopes: the scopes the route requires; every one must be granted (else 403 `insufficient_scope`).
    ///   - authentication: how strong and how recent the user's authentication must be (RFC 9470;
    ///     else 401 `insufficient_user_authentication`); `nil`: any.
    /// - Returns: the verified access; send its ``VerifiedAccess/responseHeaders`` with the answer.
    /// - Throws: ``AccessRefusal``: the rule broken, and the status and headers to answer with.
    public func verify(
        _ request: ResourceRequest, requiring scopes: Set<String> = [], authentication: AuthenticationRequirement? = nil
    ) async throws(AccessRefusal) -> VerifiedAccess {
        var usedScheme: Denial.Scheme?
        do throws(Denial) {
            let now = configuration.now()
            guard let credentials = try Credentials.read(request, maximumTokenLength: configuration.maximumTokenLength) else {
                // RFC 6750 §3: no error code, but the scopes the route needs, so that a client
                // asks for them when it logs in (as MCP clients do).
                var denial = Denial(.missingToken, nil, "An access token is required.")
                denial.scope = scopes
                throw denial
            }
            usedScheme = credentials.scheme == .dpop ? .dpop : .bearer
            try checkScheme(credentials)
            let facts = try await tokenFacts(credentials.token, now: now)
            var responseHeaders = HTTPHeaders()
            var keyThumbprint: String?
            if let bound = facts.keyThumbprint {
                guard credentials.scheme == .dpop else {
                    throw Denial(.boundTokenAsBearer, .invalidToken, "The access token is DPoP-bound: send it as 'Authorization: DPoP' with a proof.", scheme: .dpop)
                }
                keyThumbprint = try await checkProof(credentials, request: request, boundTo: bound, now: now, responseHeaders: &responseHeaders)
            } else if credentials.scheme == .dpop {
                throw Denial(.unboundTokenAsDPoP, .invalidToken, "The access token is not DPoP-bound: send it as a bearer token.", scheme: .dpop)
            } else if configuration.dpop.mode == .required {
                // Decided on the verified token: a DPoP-bound one sent as Bearer was refused above
                // (its scheme is wrong, not the token); this one is a bearer token.
                throw Denial(.dpopRequired, .invalidToken, "This resource takes DPoP-bound access tokens only.", scheme: .dpop)
            }
            var certificateThumbprint: String?
            if let bound = facts.certificateThumbprint {
                certificateThumbprint = try CertificateBinding.check(bound, peerCertificate: request.peerCertificate)
            }
            guard scopes.isSubset(of: facts.scopes) else {
                var denial = Denial(.insufficientScope, .insufficientScope, "The access token lacks a scope this request requires.")
                denial.scope = scopes
                throw denial
            }
            try authentication?.check(facts, now: now, leeway: configuration.leeway)
            let details = try facts.authorizationDetails()
            let binding: VerifiedAccess.Binding = switch (keyThumbprint, certificateThumbprint) {
            case (nil, nil): .bearer
            case (let key?, nil): .dpop(keyThumbprint: key)
            case (nil, let certificate?): .certificate(thumbprint: certificate)
            case (let key?, let certificate?): .dpopAndCertificate(keyThumbprint: key, certificateThumbprint: certificate)
            }
            return VerifiedAccess(facts, authorizationDetails: details, binding: binding, responseHeaders: responseHeaders)
        } catch {
            throw challenges.refusal(error, usedScheme: usedScheme, now: configuration.now())
        }
    }

    /// Checks a token's own rules, without a request: the JWT rules of RFC 9068 §4 (or the
    /// introspection answer) and `scopes`, but **not** its sender constraint. The answer's
    /// ``VerifiedAccess/binding`` is what the token claims (`cnf`), not proven by any proof or
    /// certificate. For tools that inspect tokens (`oidc verify --kind access`); to let a request
    /// through, use ``verify(_:requiring:authentication:)``.
    ///
    /// - Throws: ``AccessRefusal``, as ``verify(_:requiring:authentication:)`` does for the token's rules.
    public func verifyToken(
        _ token: String, requiring scopes: Set<String> = [], authentication: AuthenticationRequirement? = nil
    ) async throws(AccessRefusal) -> VerifiedAccess {
        let now = configuration.now()
        do throws(Denial) {
            guard token.utf8.count <= configuration.maximumTokenLength else {
                throw .invalidToken(.tokenTooLong, "The access token is longer than the \(configuration.maximumTokenLength) bytes this resource accepts.")
            }
            let facts = try await tokenFacts(token, now: now)
            guard scopes.isSubset(of: facts.scopes) else {
                var denial = Denial(.insufficientScope, .insufficientScope, "The access token lacks a scope this request requires.")
                denial.scope = scopes
                throw denial
            }
            try authentication?.check(facts, now: now, leeway: configuration.leeway)
            let details = try facts.authorizationDetails()
            let binding: VerifiedAccess.Binding = switch (facts.keyThumbprint, facts.certificateThumbprint) {
            case (nil, nil): .bearer
            case (let key?, nil): .dpop(keyThumbprint: key)
            case (nil, let certificate?): .certificate(thumbprint: certificate)
            case (let key?, let certificate?): .dpopAndCertificate(keyThumbprint: key, certificateThumbprint: certificate)
            }
            return VerifiedAccess(facts, authorizationDetails: details, binding: binding, responseHeaders: HTTPHeaders())
        } catch {
            throw challenges.refusal(error, usedScheme: .bearer, now: now)
        }
    }

    /// The scheme against the DPoP policy, before any token is looked at.
    private func checkScheme(_ credentials: Credentials) throws(Denial) {
        switch (credentials.scheme, configuration.dpop.mode) {
        case (.dpop, .off):
            // A scheme this resource does not take: as if no credentials came (RFC 6750 §3.1), a
            // 401 whose Bearer challenge carries no error code.
            throw Denial(.dpopNotAccepted, nil, "This resource does not take DPoP; send a bearer token.", scheme: .bearer)
        case (.bearer, _) where credentials.proof != nil:
            throw Denial(.proofWithBearerToken, .invalidRequest, "A DPoP proof came with a bearer token; send a DPoP-bound token as 'Authorization: DPoP'.")
        default:
            break
        }
    }

    /// The token's facts: a JWT verified here when issuers are configured and it looks like one,
    /// otherwise the authorization server's introspection answer.
    private func tokenFacts(_ token: String, now: Date) async throws(Denial) -> TokenFacts {
        var text = token
        let looksLikeJWT = text.withUTF8 { bytes in
            var dots = 0
            for byte in bytes where byte == UInt8(ascii: ".") { dots += 1 }
            return dots == 2
        }
        if looksLikeJWT, !configuration.issuers.isEmpty || introspection == nil {
            return try await jwt.verify(token, now: now)
        }
        guard let introspection else {
            throw .invalidToken(.opaqueTokenNotAccepted, "The access token is not a JWT, and this resource takes JWT access tokens only.")
        }
        return try await Introspected.facts(token, cache: introspection, configuration: configuration, now: now)
    }

    /// RFC 9449 §4.3 and §7.1: the proof, its `ath`, its key against `cnf.jkt`, the nonce, then the `jti`.
    private func checkProof(
        _ credentials: Credentials, request: ResourceRequest, boundTo bound: String, now: Date, responseHeaders: inout HTTPHeaders
    ) async throws(Denial) -> String {
        guard let compact = credentials.proof else {
            throw Denial.invalidProof(.missingProof, "A DPoP-bound access token needs a DPoP proof.")
        }
        let proof: DPoPProof
        do { proof = try proofs.verify(compact, method: request.method, url: request.url, accessToken: credentials.token, now: now) } catch {
            throw Denial.invalidProof(error.rule, error.message)
        }
        guard ConstantTime.equals(proof.thumbprint, bound) else {
            throw Denial.invalidProof(.proofKeyMismatch, "The DPoP proof is signed by another key than the one the token is bound to.")
        }
        if let nonces = configuration.dpop.nonces {
            switch nonces.standing(of: proof.nonce, at: now) {
            case .current: break
            case .previous: responseHeaders.add("DPoP-Nonce", nonces.current(at: now))
            case .refused:
                throw Denial(
                    .nonceRequired, .useNonce,
                    proof.nonce == nil ? "The DPoP proof needs the server's nonce (DPoP-Nonce)." : "The DPoP proof's nonce is not a current one.",
                    scheme: .dpop
                )
            }
        }
        let firstUse: Bool
        do { firstUse = try await configuration.replayStore.claim(proof.replayIdentifier, until: proof.rememberUntil, now: now) } catch {
            if let error = error as? ReplayStoreError, case .keyQuota = error.reason {
                throw .unavailable(.replayQuotaExceeded, "This client's DPoP key has sent more proofs than this resource remembers for one key; try again later.")
            }
            throw .unavailable(.replayStoreUnavailable, "The DPoP proof could not be checked for replay; try again later.")
        }
        guard firstUse else {
            throw Denial.invalidProof(.replayedProof, "The DPoP proof was used before: a proof is good for one request.")
        }
        return proof.thumbprint
    }
}
