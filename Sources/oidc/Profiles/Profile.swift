import Foundation
import OIDC

/// What `oidc login --profile NAME` remembers, so that later `oidc login`, `oidc token`,
/// `oidc refresh` and `oidc request` with the same profile need no other flag. Never a secret: a
/// client secret is remembered only as the path of the file that holds it.
///
/// Each setting is a property here and one row of ``settings``, which names its key in the
/// profile file and the flag that sets it: the file is written and read through that table
/// (`Codable`, Profile+Settings.swift), and `oidc login` lays its flags over the profile through
/// it (``lay(_:)``). What the settings do to a login is in the two `configure(_:)`s: of the
/// relying party (Profile+RelyingParty.swift) and of the authorization request
/// (AuthorizationOptions.swift).
struct Profile: Equatable {
    enum Kind: String, CaseIterable {
        case generic, schibsted, swan
    }

    static let formatVersion = 1

    var provider: Kind = .generic
    var issuer: String?
    /// The Schibsted environment's name or base URL.
    var environment: String?
    var clientID: String?
    /// `--resource`: the protected resource (RFC 8707, RFC 9728) the logins are for; the issuer (at
    /// the first login, then held to ``resourceIssuer``) and, without `--client-id`, the client are
    /// found from it at each login.
    var resource: String?
    /// The issuer a `--resource` profile signed in at first (trust on first use, security review 5,
    /// I5): later logins use it, and refuse a resource that no longer lists it, until
    /// `--resource URL --issuer NEW` accepts another. Set by the login, not by a flag.
    var resourceIssuer: String?
    var clientSecretFile: String?
    var scopes: [String] = []
    var parameters: [OAuthParameter] = []
    var prompt: String?
    var loginHint: String?
    var acrValues: String?
    var maxAge: Int?
    var uiLocales: String?
    var mfa: String?
    /// `--listen` endpoints as given (`127.0.0.1:0`, `[::1]:8000`).
    var listen: [String] = []
    var browser: String?
    /// The token store directory, when one was chosen explicitly.
    var store: String?
    /// Hosts `oidc request` may send the token to; empty: the host of the URL given.
    var allowHosts: [String] = []
    /// `--flow`: `nil` is `auto`.
    var flow: LoginFlowKind?
    /// `--identity-assertion-from`: the profile whose identity provider login signs this one in (ID-JAG).
    var identityAssertionFrom: String?
    /// `--ciba-mode`: how a CIBA login learns of the approval; `nil` is poll.
    var cibaMode: CIBAMode?
    /// `--notification-listen`: where a ping-mode CIBA login listens for the provider's notification.
    var notificationListen: String?
    /// `--assertion-file`: the JWT bearer grant's assertion, read at each grant.
    var assertionFile: String?
    /// `--device-authorization-endpoint`, for a provider whose discovery does not name one.
    var deviceAuthorizationEndpoint: String?
    /// `--par`: push every browser login's authorization request (RFC 9126), not only where the
    /// provider requires it.
    var pushedAuthorization = false
    /// `--request-object`: sign every browser login's request with the profile's private key (RFC 9101).
    var signsRequestObjects = false
    /// `--dpop`: bind each login's tokens to a new DPoP key (RFC 9449).
    var dpop = false
    /// `--fapi2`: hold browser logins to the FAPI 2.0 Security Profile.
    var fapi2 = false
    /// `--jarm`: ask for signed authorization responses (`response_mode=jwt`) and verify them.
    var signedResponses = false
    /// `--client-auth`: `nil` chooses from the credentials and the provider's methods.
    var clientAuth: String?
    /// `--private-key-file`: the path of the key that signs `private_key_jwt` assertions.
    var privateKeyFile: String?
    /// `--key-id`: the `kid` of assertions when the key file does not name one.
    var keyID: String?
    /// `--key-algorithm`: the assertions' algorithm when not the key's usual one.
    var keyAlgorithm: String?
    /// `--assertion-audience`: `issuer` (`nil`) or `endpoint`.
    var assertionAudience: String?
    /// `--client-certificate`: the path of the TLS client certificate (mutual TLS, RFC 8705).
    var clientCertificateFile: String?
    /// `--client-key`: the path of its private key.
    var clientKeyFile: String?
    /// `--ca-file`: the path of a certificate authority trusted besides the system's.
    var caFile: String?

    init() {}

    /// Lays the flags given in `groups` (a command and its option groups) over the profile: each
    /// flag of ``settings`` that was given replaces its setting, as the row remembers it.
    ///
    /// - Throws: a usage error when a value does not parse (`--scope`, `--param`).
    mutating func lay(_ groups: Any...) throws {
        for setting in Self.settings {
            for group in groups { try setting.lay(&self, group) }
        }
    }

    /// The profile to save after `login`: a `--resource` profile remembers the issuer it signed in
    /// at (when it has none yet, or `--issuer` chose another), and DPoP when the resource turned
    /// it on (a resource that takes only bound tokens), as `--dpop` is remembered.
    func remembering(_ login: StoredLogin) -> Profile {
        var kept = self
        guard resource != nil, flow != .jwtBearer else { return kept }
        kept.resourceIssuer = login.issuer
        if login.isDPoPBound { kept.dpop = true }
        return kept
    }

    /// The file's bytes: sorted keys, indented, settings at their defaults left out (the format of
    /// every version so far, byte for byte).
    func serialized() throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]
        return Array(try encoder.encode(self))
    }

    /// - Throws: a message (the caller names the file) when the JSON is not a profile of a known version.
    init(serialized bytes: [UInt8]) throws(ProfileFormatError) {
        // The strict reader decides what is JSON at all (no duplicate members, bounded depth).
        do { _ = try StrictJSONParser.parseObject(bytes) } catch { throw ProfileFormatError("it is not a JSON object") }
        do { self = try JSONDecoder().decode(Profile.self, from: Data(bytes)) } catch let error as ProfileFormatError { throw error } catch {
            throw ProfileFormatError("it is not a JSON object")
        }
    }
}

extension Profile: Codable {
    /// Reads the version, then every row of ``settings``; members no row names are ignored.
    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: ProfileKey.self)
        let version: Double?
        do { version = try container.decodeIfPresent(Double.self, forKey: ProfileKey("version")) } catch { version = nil }
        guard let version else { throw ProfileFormatError("it has no format version") }
        guard version == Double(Self.formatVersion) else {
            throw ProfileFormatError("it has format version \(version), which this version of oidc does not know")
        }
        self.init()
        for setting in Self.settings { try setting.read(&self, container) }
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: ProfileKey.self)
        try container.encode(Self.formatVersion, forKey: ProfileKey("version"))
        for setting in Self.settings { try setting.write(self, &container) }
    }
}

struct ProfileFormatError: Error {
    let reason: String
    init(_ reason: String) { self.reason = reason }
}
