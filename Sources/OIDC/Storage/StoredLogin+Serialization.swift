internal import Foundation

/// The JSON of a stored login, as ``FileKeychain`` and the PostgreSQL store keep it:
///
/// ```json
/// {"version": 1, "issuer": "…", "client_id": "…", "subject": "…", "session_id": "…",
///  "tokens": {"access_token": "…", "token_type": "Bearer", "refresh_token": "…", "id_token": "…",
///             "expires_at": 1700000000, "received_at": 1699996400, "scope": "openid",
///             "authorization_details": [{"type": "payment_initiation", …}]},
///  "provider": {"issuer": "…", "authorization_endpoint": "…", "token_endpoint": "…", …},
///  "refresh_in_flight": "<id> <ms since 1970>",
///  "grant": {"type": "client_credentials", "scopes": ["reports"], "parameters": [["resource", "…"]]},
///  "resource": "https://api.example.com/mcp",
///  "attributes": {"profile": "work"}}
/// ```
///
/// Files of earlier versions read as they are: without `provider` or `session_id`, and with the in-flight mark as
/// the attribute `oidc.refresh-in-flight`, which is read into ``StoredLogin/refreshMark`` (and
/// written there too, so that instances of an earlier version in the same fleet still see it).
/// Without `grant`, the grant is read from the attributes `oidc` kept it in before
/// (``Grant/legacyAttributes``), which stay as they are.
extension StoredLogin {
    /// The storage format's version; a file with a newer one is refused rather than misread.
    package static let formatVersion = 1

    /// Where versions before the typed field kept the in-flight mark.
    static let legacyMarkAttribute = "oidc.refresh-in-flight"

    /// The JSON a store writes (tokens in clear: the file itself is the secret, 0600;
    /// ``FileKeychain`` seals it when given a ``TokenEncryption``).
    package func serialized() throws(OIDCError) -> [UInt8] {
        var tokenObject: [String: Any] = [
            "access_token": tokens.accessToken.revealedValue,
            "token_type": tokens.tokenType,
            "scope": tokens.scopes.joined(separator: " "),
            "received_at": tokens.receivedAt.timeIntervalSince1970,
        ]
        tokenObject["refresh_token"] = tokens.refreshToken?.revealedValue
        tokenObject["id_token"] = tokens.idToken?.revealedValue
        tokenObject["expires_at"] = tokens.expiresAt?.timeIntervalSince1970
        if let details = tokens.authorizationDetails {
            tokenObject["authorization_details"] = try? JSONSerialization.jsonObject(with: Data(details.jsonText.utf8))
        }
        var attributes = attributes
        attributes[Self.legacyMarkAttribute] = refreshMark?.encoded
        var object: [String: Any] = [
            "version": Self.formatVersion, "issuer": issuer, "client_id": clientID, "tokens": tokenObject,
            "attributes": attributes,
        ]
        object["subject"] = subject
        object["session_id"] = sessionID
        object["provider"] = provider.map(Self.serialized)
        object["refresh_in_flight"] = refreshMark?.encoded
        if let grant {
            var members: [String: Any] = ["type": grant.type.rawValue]
            if !grant.scopes.isEmpty { members["scopes"] = grant.scopes }
            if !grant.parameters.isEmpty { members["parameters"] = grant.parameters.map { [$0.name, $0.value] } }
            object["grant"] = members
        }
        object["dpop"] = try serializedDPoPBinding()
        object["resource"] = resource
        do {
            return Array(try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]))
        } catch {
            throw OIDCError(.storageFailure, "The login could not be serialized: \(error.localizedDescription).")
        }
    }

    /// The tokens' `authorization_details` (RFC 9396) as stored: absent, or an array of typed objects.
    private static func authorizationDetails(_ value: JSONValue?, corrupt: (String) -> OIDCError) throws(OIDCError) -> AuthorizationDetails? {
        switch value {
        case nil, .null?: return nil
        case .array(let elements)?:
            guard let details = try? AuthorizationDetails(elements) else { throw corrupt("authorization_details is not an array of typed objects") }
            return details
        default: throw corrupt("authorization_details is not an array")
        }
    }

    /// Reads what ``serialized()`` wrote, or an earlier version of it.
    ///
    /// - Throws: ``OIDCError/Code/corruptStore`` (with `path` in the context when given) when the
    ///   bytes are not a stored login of a known version.
    package init(serialized bytes: [UInt8], path: String? = nil) throws(OIDCError) {
        func corrupt(_ reason: String) -> OIDCError {
            var context: [String: String] = [:]
            if let path { context["path"] = path }
            return OIDCError(.corruptStore, "The stored login\(path.map { " at \($0)" } ?? "") is unreadable: \(reason).", context: context)
        }
        let object: [String: JSONValue]
        do { object = try StrictJSONParser.parseObject(bytes) } catch { throw corrupt("not a JSON object (\(error))") }
        guard let version = object["version"]?.numberValue else { throw corrupt("no format version") }
        guard version == Double(Self.formatVersion) else {
            var context: [String: String] = [:]
            if let path { context["path"] = path }
            throw OIDCError(
                .storageFailure,
                "The stored login\(path.map { " at \($0)" } ?? "") has format version \(version), which this version of oidc does not know; a newer version wrote it. Upgrade, or use another store.",
                context: context
            )
        }
        guard let issuer = object["issuer"]?.stringValue, let clientID = object["client_id"]?.stringValue,
            let tokens = object["tokens"]?.objectValue
        else { throw corrupt("issuer, client_id or tokens missing") }
        guard let access = tokens["access_token"]?.stringValue, let type = tokens["token_type"]?.stringValue,
            let received = tokens["received_at"]?.numberValue
        else { throw corrupt("access_token, token_type or received_at missing") }
        func optionalString(_ value: JSONValue?, _ what: String = "a token") throws(OIDCError) -> String? {
            switch value {
            case nil, .null?: return nil
            case .string(let text)?: return text
            default: throw corrupt("\(what) is not a string")
            }
        }
        func expiry(_ value: JSONValue?) throws(OIDCError) -> Date? {
            switch value {
            case nil, .null?: return nil
            case .number(let seconds)? where seconds.isFinite: return Date(timeIntervalSince1970: seconds)
            default: throw corrupt("expires_at is not a number of seconds")
            }
        }
        let scope = tokens["scope"]?.stringValue ?? ""
        var attributes = (object["attributes"]?.objectValue ?? [:]).compactMapValues(\.stringValue)
        let legacyMark = attributes.removeValue(forKey: Self.legacyMarkAttribute)
        let provider: ProviderConfiguration?
        switch object["provider"] {
        case nil, .null?: provider = nil
        case .object(let members)?:
            guard let configuration = Self.provider(members) else { throw corrupt("provider is not a provider configuration") }
            provider = configuration
        default: throw corrupt("provider is not an object")
        }
        self.init(
            tokens: TokenSet(
                accessToken: Secret(access), tokenType: type,
                refreshToken: try optionalString(tokens["refresh_token"]).map(Secret.init),
                idToken: try optionalString(tokens["id_token"]).map(Secret.init),
                expiresAt: try expiry(tokens["expires_at"]),
                scopes: scope.split(separator: " ").map(String.init),
                receivedAt: Date(timeIntervalSince1970: received),
                authorizationDetails: try Self.authorizationDetails(tokens["authorization_details"], corrupt: corrupt)
            ),
            issuer: issuer, clientID: clientID, subject: try optionalString(object["subject"], "subject"), provider: provider,
            attributes: attributes
        )
        sessionID = try optionalString(object["session_id"], "session_id")
        if let member = object["dpop"] {
            guard let binding = Self.dpopBinding(member) else { throw corrupt("dpop has no jkt") }
            (dpopThumbprint, dpopKey) = binding
        }
        switch object["grant"] {
        case nil, .null?: grant = Grant(legacyAttributes: attributes)
        case .object(let members)?:
            guard let grant = Self.grant(members) else { throw corrupt("grant is not a grant type with scopes and parameters") }
            self.grant = grant
        default: throw corrupt("grant is not an object")
        }
        resource = try optionalString(object["resource"], "resource")
        // A mark that does not parse is no mark.
        refreshMark = (try optionalString(object["refresh_in_flight"], "refresh_in_flight") ?? legacyMark).flatMap(RefreshMark.init(encoded:))
    }

    /// The grant ``serialized()`` wrote; `nil` when a member has the wrong type.
    private static func grant(_ object: [String: JSONValue]) -> Grant? {
        guard let type = object["type"]?.stringValue else { return nil }
        var grant = Grant(type: GrantType(rawValue: type))
        switch object["scopes"] {
        case nil, .null?: break
        case .array(let values)?:
            let scopes = values.compactMap(\.stringValue)
            guard scopes.count == values.count else { return nil }
            grant.scopes = scopes
        default: return nil
        }
        switch object["parameters"] {
        case nil, .null?: break
        case .array(let pairs)?:
            for pair in pairs {
                guard let parts = pair.arrayValue?.compactMap(\.stringValue), parts.count == 2, pair.arrayValue?.count == 2 else { return nil }
                grant.parameters.append(OAuthParameter(parts[0], parts[1]))
            }
        default: return nil
        }
        return grant
    }

    private static func serialized(_ provider: ProviderConfiguration) -> [String: Any] {
        var object: [String: Any] = [
            "issuer": provider.issuer,
            "default_scopes": provider.defaultScopes, "token_endpoint_auth_method": provider.clientAuthentication.rawValue,
            "issuer_matching": provider.issuerMatching.rawValue,
            "authorization_response_iss_parameter_supported": provider.authorizationResponseIssParameterSupported,
        ]
        for endpoint in ProviderEndpoint.allCases {
            object[endpoint.member] = provider[keyPath: endpoint.configuration]?.absoluteString
        }
        if !provider.codeChallengeMethodsSupported.isEmpty { object["code_challenge_methods_supported"] = provider.codeChallengeMethodsSupported }
        if !provider.tokenRequestHeaders.isEmpty {
            object["token_request_headers"] = provider.tokenRequestHeaders.map { [$0.name, $0.value] }
        }
        return object
    }

    /// The configuration ``serialized(_:)`` wrote; `nil` when a member has the wrong type or an
    /// endpoint is not an absolute URL. Members this version does not know are ignored.
    private static func provider(_ object: [String: JSONValue]) -> ProviderConfiguration? {
        func url(_ name: String) -> URL?? {
            switch object[name] {
            case nil, .null?: return .some(nil)
            case .string(let text)?: return URL(string: text).flatMap { $0.scheme == nil ? nil : .some($0) }
            default: return nil
            }
        }
        guard let issuer = object["issuer"]?.stringValue,
            let scopes = object["default_scopes"]?.arrayValue?.map(\.stringValue), !scopes.contains(nil),
            let method = object["token_endpoint_auth_method"]?.stringValue.flatMap(ClientAuthenticationMethod.init(rawValue:)),
            let matching = object["issuer_matching"]?.stringValue.flatMap(IssuerMatching.init(rawValue:))
        else { return nil }
        var headers: [OAuthParameter] = []
        switch object["token_request_headers"] {
        case nil, .null?: break
        case .array(let pairs)?:
            for pair in pairs {
                guard let parts = pair.arrayValue?.compactMap(\.stringValue), parts.count == 2, pair.arrayValue?.count == 2 else { return nil }
                headers.append(OAuthParameter(parts[0], parts[1]))
            }
        default: return nil
        }
        var configuration = ProviderConfiguration(
            issuer: issuer, authorizationEndpoint: nil, defaultScopes: scopes.compactMap { $0 }, clientAuthentication: method
        )
        for endpoint in ProviderEndpoint.allCases {
            guard let url = url(endpoint.member) else { return nil }
            configuration[keyPath: endpoint.configuration] = url
        }
        configuration.tokenRequestHeaders = headers
        configuration.issuerMatching = matching
        configuration.authorizationResponseIssParameterSupported = object["authorization_response_iss_parameter_supported"]?.boolValue ?? false
        configuration.codeChallengeMethodsSupported = object["code_challenge_methods_supported"]?.arrayValue?.compactMap(\.stringValue) ?? []
        return configuration
    }
}
