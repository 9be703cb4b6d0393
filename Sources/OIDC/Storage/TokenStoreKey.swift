/// Where a login is kept, named like a keychain item: a service and an account.
///
/// The Schibsted preset uses service `com.schibsted.account` and the client id as the account, as
/// the Schibsted SDK does; the `oidc` command uses `oidc` and the profile name.
public struct TokenStoreKey: Sendable, Hashable, CustomStringConvertible {
    public var service: String
    public var account: String

    public init(service: String, account: String) {
        self.service = service
        self.account = account
    }

    /// The Schibsted SDK's key: one session per client.
    public static func schibsted(clientID: String) -> TokenStoreKey {
        TokenStoreKey(service: Schibsted.storageService, account: clientID)
    }

    public var description: String { "\(service)/\(account)" }
}
