import OIDC

/// The one table of what a profile remembers: for each setting, its key in the profile file, its
/// property, and the `oidc login` flag that sets it (with how a given value is remembered: paths
/// made absolute, hosts lowercased). The file is written and read through it, and the flags are
/// laid over the profile through it, so a new remembered flag is its property and one row here
/// (and, when it changes the relying party, a line of ``Profile/configure(_:)``).
extension Profile {
    static var settings: [Setting] {
        [
            Setting("provider", \.provider, flag: \AuthorizationOptions.provider) { Kind(rawValue: $0.rawValue) ?? .generic },
            Setting("issuer", \.issuer, flag: \AuthorizationOptions.issuer),
            Setting("environment", \.environment, flag: \AuthorizationOptions.environment),
            Setting("client_id", \.clientID, flag: \AuthorizationOptions.clientId),
            Setting("resource", \.resource, flag: \Login.resource),
            Setting("resource_issuer", \.resourceIssuer),
            Setting("client_secret_file", \.clientSecretFile, flag: \Login.clientSecretFile) { RememberedPath.absolute($0) },
            // Added to what the profile asks for (a step-up keeps the scopes that worked, as the
            // MCP authorization spec's step-up asks); --reset starts from the given ones alone.
            Setting("scopes", \.scopes, adding: \AuthorizationOptions.scope) { try ScopeTokens.parse($0) },
            Setting("parameters", \.parameters, flags: \AuthorizationOptions.parameters) { try AuthorizationOptions.parseParameters($0) },
            Setting("prompt", \.prompt, flag: \AuthorizationOptions.prompt),
            Setting("login_hint", \.loginHint, flag: \AuthorizationOptions.loginHint),
            Setting("acr_values", \.acrValues, flag: \AuthorizationOptions.acrValues),
            Setting("max_age", \.maxAge, flag: \AuthorizationOptions.maxAge),
            Setting("ui_locales", \.uiLocales, flag: \AuthorizationOptions.uiLocales),
            Setting("mfa", \.mfa, flag: \AuthorizationOptions.mfa),
            Setting("listen", \.listen, flags: \Login.listen) { $0 },
            Setting("browser", \.browser, flag: \Login.browser) { RememberedPath.absoluteCommand($0) },
            Setting("store", \.store, flag: \StoreOptions.explicitStore) { RememberedPath.absolute($0) },
            Setting("allow_hosts", \.allowHosts, flags: \Login.allowHost) { $0.map { $0.lowercased() } },
            Setting("flow", \.flow, flag: \Login.flow) { $0 == .auto ? nil : $0 },
            Setting("identity_assertion_from", \.identityAssertionFrom, flag: \Login.identityAssertionFrom),
            Setting("ciba_mode", \.cibaMode, flag: \Login.cibaMode),
            Setting("notification_listen", \.notificationListen, flag: \Login.notificationListen),
            Setting("assertion_file", \.assertionFile, flag: \Login.assertionFile) { RememberedPath.absolute($0) },
            Setting("device_authorization_endpoint", \.deviceAuthorizationEndpoint, flag: \Login.deviceAuthorizationEndpoint),
            Setting("par", \.pushedAuthorization, flag: \Login.par),
            Setting("request_object", \.signsRequestObjects, flag: \Login.requestObject),
            Setting("dpop", \.dpop, flag: \Login.dpop),
            Setting("fapi2", \.fapi2, flag: \Login.fapi2),
            Setting("jarm", \.signedResponses, flag: \Login.jarm),
            Setting("client_auth", \.clientAuth, flag: \ClientAuthOptions.clientAuth),
            Setting("private_key_file", \.privateKeyFile, flag: \ClientAuthOptions.privateKeyFile) { RememberedPath.absolute($0) },
            Setting("key_id", \.keyID, flag: \ClientAuthOptions.keyId),
            Setting("key_algorithm", \.keyAlgorithm, flag: \ClientAuthOptions.keyAlgorithm),
            Setting("assertion_audience", \.assertionAudience, flag: \ClientAuthOptions.assertionAudience) { $0.rawValue },
            Setting("client_certificate_file", \.clientCertificateFile, flag: \TLSOptions.clientCertificate) { RememberedPath.absolute($0) },
            Setting("client_key_file", \.clientKeyFile, flag: \TLSOptions.clientKey) { RememberedPath.absolute($0) },
            Setting("ca_file", \.caFile, flag: \TLSOptions.caFile) { RememberedPath.absolute($0) },
        ]
    }

    /// One row of ``settings``: a property of the profile, its key in the file, and its flag.
    struct Setting {
        /// The setting's key in the profile file.
        let key: String
        /// Reads the setting from the file (its default when the key is missing or `null`).
        let read: (inout Profile, KeyedDecodingContainer<ProfileKey>) throws -> Void
        /// Writes the setting to the file, unless it is at its default.
        let write: (Profile, inout KeyedEncodingContainer<ProfileKey>) throws -> Void
        /// Lays the flag over the profile when `group` is the flag's command or option group and
        /// the flag was given.
        let lay: (inout Profile, Any) throws -> Void

        /// A flag remembered as `remembered` makes its value.
        init<Group, Flag, Value: ProfileValue>(
            _ key: String, _ property: WritableKeyPath<Profile, Value>, flag: KeyPath<Group, Flag?>,
            _ remembered: @escaping (Flag) throws -> Value
        ) {
            self.init(key, property) { profile, group in
                guard let group = group as? Group, let given = group[keyPath: flag] else { return }
                profile[keyPath: property] = try remembered(given)
            }
        }

        /// A flag remembered as given (`--dpop`/`--no-dpop` as `true`/`false`).
        init<Group, Value: ProfileValue>(_ key: String, _ property: WritableKeyPath<Profile, Value>, flag: KeyPath<Group, Value?>) {
            self.init(key, property, flag: flag) { $0 }
        }

        /// An optional flag remembered as given (`--issuer URL`).
        init<Group, Value>(_ key: String, _ property: WritableKeyPath<Profile, Value?>, flag: KeyPath<Group, Value?>) where Value?: ProfileValue {
            self.init(key, property, flag: flag) { $0 }
        }

        /// A repeatable flag, remembered as `remembered` makes its values when it was given at all.
        init<Group, Flag, Value: ProfileValue>(
            _ key: String, _ property: WritableKeyPath<Profile, Value>, flags: KeyPath<Group, [Flag]>,
            _ remembered: @escaping ([Flag]) throws -> Value
        ) {
            self.init(key, property) { profile, group in
                guard let group = group as? Group else { return }
                let given = group[keyPath: flags]
                if !given.isEmpty { profile[keyPath: property] = try remembered(given) }
            }
        }

        /// A repeatable flag whose values are added to the remembered ones (in order, once each).
        init<Group>(
            _ key: String, _ property: WritableKeyPath<Profile, [String]>, adding flags: KeyPath<Group, [String]>,
            _ remembered: @escaping ([String]) throws -> [String]
        ) {
            self.init(key, property) { profile, group in
                guard let group = group as? Group else { return }
                let given = group[keyPath: flags]
                guard !given.isEmpty else { return }
                var union = profile[keyPath: property]
                for value in try remembered(given) where !union.contains(value) { union.append(value) }
                profile[keyPath: property] = union
            }
        }

        /// A setting no flag sets: the login remembers it (the issuer of a `--resource` profile).
        init<Value>(_ key: String, _ property: WritableKeyPath<Profile, Value?>) where Value?: ProfileValue {
            self.init(key, property) { _, _ in }
        }

        private init<Value: ProfileValue>(_ key: String, _ property: WritableKeyPath<Profile, Value>, lay: @escaping (inout Profile, Any) throws -> Void) {
            self.key = key
            self.read = { profile, container in profile[keyPath: property] = try Value.read(ProfileKey(key), from: container) }
            self.write = { profile, container in
                let value = profile[keyPath: property]
                if !value.isDefault { try value.write(ProfileKey(key), to: &container) }
            }
            self.lay = lay
        }
    }
}
