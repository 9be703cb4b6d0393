internal import Foundation

/// One login as a ``TokenStore`` keeps it: the tokens and what is needed to use and refresh them.
public struct StoredLogin: Sendable, Equatable {
    /// The login's tokens.
    public var tokens: TokenSet
    /// The issuer the tokens came from.
    public var issuer: String
    /// The client the tokens were issued to.
    public var clientID: String
    /// The ID token's `sub`, when known: who is logged in.
    public var subject: String?
    /// Anything else worth remembering, such as the token endpoint or the profile name. Never put a
    /// secret here: attributes are shown by `oidc status`.
    public var attributes: [String: String]

    /// A login from its parts.
    public init(tokens: TokenSet, issuer: String, clientID: String, subject: String? = nil, attributes: [String: String] = [:]) {
        self.tokens = tokens
        self.issuer = issuer
        self.clientID = clientID
        self.subject = subject
        self.attributes = attributes
    }
}

extension StoredLogin {
    /// The login to keep after ``TokenClient/completeLogin(_:for:keys:now:configure:)``: its
    /// tokens, with the subject (who is logged in) taken from the verified ID token, so that
    /// refreshed ID tokens can be tied to the same user later (OIDC Core §12.2).
    public init(_ verified: VerifiedLogin, clientID: String, attributes: [String: String] = [:]) {
        self.init(
            tokens: verified.tokens, issuer: verified.idToken.claims.issuer, clientID: clientID, subject: verified.idToken.claims.subject,
            attributes: attributes
        )
    }
}

extension StoredLogin {
    /// The storage format's version; a file with a newer one is refused rather than misread.
    package static let formatVersion = 1

    /// The JSON a file-based store writes (tokens in clear: the file itself is the secret, 0600;
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
        var object: [String: Any] = [
            "version": Self.formatVersion, "issuer": issuer, "client_id": clientID, "tokens": tokenObject,
            "attributes": attributes,
        ]
        object["subject"] = subject
        do {
            return Array(try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]))
        } catch {
            throw OIDCError(.storageFailure, "The login could not be serialized: \(error.localizedDescription).")
        }
    }

    /// Reads what ``serialized()`` wrote.
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
        do { object = try StrictJSON.parseObject(bytes) } catch { throw corrupt("not a JSON object (\(error))") }
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
        func optionalString(_ value: JSONValue?) throws(OIDCError) -> String? {
            switch value {
            case nil, .null?: return nil
            case .string(let text)?: return text
            default: throw corrupt("a token is not a string")
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
        self.init(
            tokens: TokenSet(
                accessToken: Secret(access), tokenType: type,
                refreshToken: try optionalString(tokens["refresh_token"]).map(Secret.init),
                idToken: try optionalString(tokens["id_token"]).map(Secret.init),
                expiresAt: try expiry(tokens["expires_at"]),
                scopes: scope.split(separator: " ").map(String.init),
                receivedAt: Date(timeIntervalSince1970: received)
            ),
            issuer: issuer, clientID: clientID, subject: try optionalString(object["subject"]),
            attributes: (object["attributes"]?.objectValue ?? [:]).compactMapValues(\.stringValue)
        )
    }
}
