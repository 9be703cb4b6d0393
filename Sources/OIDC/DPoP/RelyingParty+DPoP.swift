internal import Foundation

/// Whether a ``RelyingParty`` binds its tokens with DPoP (RFC 9449), and with which key.
public enum DPoPUse: Sendable, Equatable {
    /// Bearer tokens.
    case off
    /// A new key of this algorithm for each login (and each service session): the login keeps it,
    /// so nothing outlives the tokens it binds. ES256, PS256 or EdDSA.
    case newKeyPerLogin(JWSAlgorithm)
    /// This one key for every login: for a server whose key lives in its own secret store.
    case key(DPoPKey)

    /// A new ES256 key for each login.
    public static let on = DPoPUse.newKeyPerLogin(.es256)

    /// The algorithm of the keys this use makes or holds; `nil` when off.
    var algorithm: JWSAlgorithm? {
        switch self {
        case .off: nil
        case .newKeyPerLogin(let algorithm): algorithm
        case .key(let key): key.algorithm
        }
    }
}

extension RelyingParty {
    /// A key for a new login, as the configuration's ``Configuration/dpop`` says; `nil` when DPoP is off.
    ///
    /// - Throws: ``OIDCError/Code/invalidArgument`` when the provider names the algorithms it
    ///   takes for proofs and the key's is not one; what ``DPoPKey/generate(_:)`` throws.
    package func newLoginDPoPKey() throws(OIDCError) -> DPoPKey? {
        let key: DPoPKey
        switch configuration.dpop {
        case .off: return nil
        case .newKeyPerLogin(let algorithm): key = try DPoPKey.generate(algorithm)
        case .key(let given): key = given
        }
        let taken = provider.dpopSigningAlgorithms
        guard taken.isEmpty || taken.contains(key.algorithm.rawValue) else {
            throw .invalidArgument(
                "The provider \(provider.issuer) takes DPoP proofs signed with \(taken.joined(separator: ", ")), and this key signs \(key.algorithm.rawValue); choose one of those (ES256 is the usual one)."
            )
        }
        return key
    }

    /// Whether this relying party's logins get DPoP-bound tokens (``Configuration/dpop`` is not off).
    var bindsTokensWithDPoP: Bool { configuration.dpop != .off }

    /// A maker of each new client-credentials token set's DPoP key, when DPoP is on: for a service
    /// session, whose tokens are renewed without a login.
    var serviceDPoPKeyMaker: (@Sendable () -> Result<DPoPKey?, OIDCError>)? {
        guard bindsTokensWithDPoP else { return nil }
        let relyingParty = self
        return {
            do throws(OIDCError) { return .success(try relyingParty.newLoginDPoPKey()) } catch { return .failure(error) }
        }
    }

    /// Refuses a request made without the DPoP key this relying party's logins need (a `configure`
    /// closure that replaced it, or a request made elsewhere): its tokens would come back unbound.
    func requireDPoPKey(of request: AuthorizationRequest) throws(OIDCError) {
        guard bindsTokensWithDPoP, request.dpopKey == nil else { return }
        throw .invalidArgument(
            "DPoP is on, and this request has no DPoP key (AuthorizationRequest.dpopKey): its tokens would come back unbound. Make the request with authorizationRequest(redirectURI:) of this relying party."
        )
    }

    /// The token client, proving possession of `key` when there is one (a key of
    /// ``DPoPKey/generate(_:)``, or your own), with this relying party's nonces: for grants you call
    /// yourself.
    public func tokenClient(proving key: DPoPKey?) -> TokenClient {
        guard let key else { return tokenClient }
        var client = tokenClient
        client.dpop = DPoP(key: key, nonces: dpopNonces, now: tokenClient.now)
        return client
    }
}
