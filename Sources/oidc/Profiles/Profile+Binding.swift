import OIDC

/// Which logins a profile's settings are for (review 3, M3). A profile names one provider and one
/// client, and its client secret file belongs to that client; a store holds whatever login was last
/// kept under the profile's name, which may be of another provider: an older login left in the
/// default store after the profile moved to another store, or one put there by `oidc inject`. The
/// profile's secret goes only to the issuer and client it was configured for.
extension Profile {
    /// The issuer these settings log in to: `--issuer`, or the preset's.
    var configuredIssuer: String? {
        switch provider {
        case .generic: issuer
        case .schibsted: environment.flatMap(Schibsted.Environment.init(name:)).map { ProviderConfiguration.schibsted($0).issuer }
        case .swan: ProviderConfiguration.swan.issuer
        }
    }

    /// Whether `login` is of the issuer and client id these settings name. The issuer is compared
    /// as the provider compares it (exactly; a Schibsted one ignoring one trailing slash).
    func configures(_ login: StoredLogin) -> Bool {
        if let resource {
            // A resource's profile finds its issuer and client at each login: the login of its
            // resource is its own, of the issuer and client `--issuer` and `--client-id` name when given.
            guard let identifier = try? ResourceIdentifier(parsing: resource), login.resource == identifier.value else { return false }
            if let clientID, login.clientID != clientID { return false }
            return issuer.map { IssuerMatching.exact.matches(login.issuer, expected: $0) } ?? true
        }
        guard let issuer = configuredIssuer, let clientID, login.clientID == clientID else { return false }
        let matching: IssuerMatching = provider == .schibsted ? .ignoringTrailingSlash : .exact
        return matching.matches(login.issuer, expected: issuer)
    }

    /// "issuer URL (client id ID)", for messages.
    var configuredClient: String {
        if let resource, issuer == nil {
            return "resource \(UntrustedText.sanitized(resource)) (client id \(UntrustedText.sanitized(clientID ?? "registered")))"
        }
        return "issuer \(configuredIssuer.map { UntrustedText.sanitized($0) } ?? "unknown") (client id \(UntrustedText.sanitized(clientID ?? "unknown")))"
    }
}

extension StoredLogin {
    /// "issuer URL (client id ID)", for messages.
    var clientDescription: String {
        "issuer \(UntrustedText.sanitized(issuer)) (client id \(UntrustedText.sanitized(clientID)))"
    }
}
