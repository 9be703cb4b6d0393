/// Where a login is kept, named like a keychain item: a service and an account.
///
/// The Schibsted preset uses service `com.schibsted.account` and the client id as the account, as
/// the Schibsted SDK does; the `oidc` command uses `oidc` and the profile name.
public struct TokenStoreKey: Sendable, Hashable, CustomStringConvertible {
    /// The service, such as `oidc` or `com.schibsted.account`.
    public var service: String
    /// The account within the service, such as a profile name or a client id.
    public var account: String

    /// A key from a service and an account.
    public init(service: String, account: String) {
        self.service = service
        self.account = account
    }

    /// A key whose account is `sha256:` and the SHA-256 of `secretAccount` in lower-case hex, for
    /// an account that is itself a secret, such as a session cookie's value: store keys appear in
    /// error messages, logs, file names and database rows, and the secret never should.
    ///
    /// - Throws: `OIDCError.Code.cryptoFailure` when libcrypto cannot compute the digest (no
    ///   memory, a broken OpenSSL configuration); never a key that other secrets would share.
    public init(service: String, hashingAccount secretAccount: Secret) throws(OIDCError) {
        let digest = try LibCrypto.sha256(Array(secretAccount.revealedValue.utf8))
        self.init(service: service, account: "sha256:" + Hex.lowercase(digest))
    }

    /// `service/account`.
    public var description: String { "\(service)/\(account)" }
}
