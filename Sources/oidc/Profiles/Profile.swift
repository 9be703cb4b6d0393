import Foundation
import OIDC

/// What `oidc login --profile NAME` remembers, so that later `oidc login`, `oidc token`,
/// `oidc refresh` and `oidc request` with the same profile need no other flag. Never a secret: a
/// client secret is remembered only as the path of the file that holds it.
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

    func serialized() throws -> [UInt8] {
        var object: [String: Any] = ["version": Self.formatVersion, "provider": provider.rawValue]
        object["issuer"] = issuer
        object["environment"] = environment
        object["client_id"] = clientID
        object["client_secret_file"] = clientSecretFile
        if !scopes.isEmpty { object["scopes"] = scopes }
        if !parameters.isEmpty { object["parameters"] = parameters.map { [$0.name, $0.value] } }
        object["prompt"] = prompt
        object["login_hint"] = loginHint
        object["acr_values"] = acrValues
        object["max_age"] = maxAge
        object["ui_locales"] = uiLocales
        object["mfa"] = mfa
        if !listen.isEmpty { object["listen"] = listen }
        object["browser"] = browser
        object["store"] = store
        if !allowHosts.isEmpty { object["allow_hosts"] = allowHosts }
        object["flow"] = flow?.rawValue
        object["device_authorization_endpoint"] = deviceAuthorizationEndpoint
        if pushedAuthorization { object["par"] = true }
        if signsRequestObjects { object["request_object"] = true }
        if dpop { object["dpop"] = true }
        if fapi2 { object["fapi2"] = true }
        if signedResponses { object["jarm"] = true }
        object["client_auth"] = clientAuth
        object["private_key_file"] = privateKeyFile
        object["key_id"] = keyID
        object["key_algorithm"] = keyAlgorithm
        object["assertion_audience"] = assertionAudience
        object["client_certificate_file"] = clientCertificateFile
        object["client_key_file"] = clientKeyFile
        object["ca_file"] = caFile
        return Array(try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .prettyPrinted, .withoutEscapingSlashes]))
    }

    /// - Throws: a message (the caller names the file) when the JSON is not a profile of a known version.
    init(serialized bytes: [UInt8]) throws(ProfileFormatError) {
        let object: [String: JSONValue]
        do { object = try StrictJSONParser.parseObject(bytes) } catch { throw ProfileFormatError("it is not a JSON object") }
        guard let version = object["version"]?.numberValue else { throw ProfileFormatError("it has no format version") }
        guard version == Double(Self.formatVersion) else {
            throw ProfileFormatError("it has format version \(version), which this version of oidc does not know")
        }
        func string(_ name: String) throws(ProfileFormatError) -> String? {
            switch object[name] {
            case nil, .null?: return nil
            case .string(let text)?: return text
            default: throw ProfileFormatError("'\(name)' is not a string")
            }
        }
        func flag(_ name: String) throws(ProfileFormatError) -> Bool {
            switch object[name] {
            case nil, .null?: return false
            case .bool(let flag)?: return flag
            default: throw ProfileFormatError("'\(name)' is not true or false")
            }
        }
        func strings(_ name: String) throws(ProfileFormatError) -> [String] {
            switch object[name] {
            case nil, .null?: return []
            case .array(let values)?:
                var result: [String] = []
                for value in values {
                    guard let text = value.stringValue else { throw ProfileFormatError("'\(name)' holds something other than strings") }
                    result.append(text)
                }
                return result
            default: throw ProfileFormatError("'\(name)' is not a list")
            }
        }
        guard let kind = Kind(rawValue: try string("provider") ?? "generic") else {
            throw ProfileFormatError("'provider' is not one of \(Kind.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        provider = kind
        issuer = try string("issuer")
        environment = try string("environment")
        clientID = try string("client_id")
        clientSecretFile = try string("client_secret_file")
        scopes = try strings("scopes")
        if case .array(let pairs)? = object["parameters"] {
            for pair in pairs {
                guard case .array(let items) = pair, items.count == 2, let name = items[0].stringValue, let value = items[1].stringValue else {
                    throw ProfileFormatError("'parameters' must be a list of [name, value] pairs")
                }
                parameters.append(OAuthParameter(name, value))
            }
        }
        prompt = try string("prompt")
        loginHint = try string("login_hint")
        acrValues = try string("acr_values")
        if let age = object["max_age"]?.numberValue {
            guard let whole = Int(exactly: age), whole >= 0 else { throw ProfileFormatError("'max_age' is not a whole number of seconds") }
            maxAge = whole
        }
        uiLocales = try string("ui_locales")
        mfa = try string("mfa")
        listen = try strings("listen")
        browser = try string("browser")
        store = try string("store")
        allowHosts = try strings("allow_hosts")
        if let name = try string("flow") {
            guard let kind = LoginFlowKind(rawValue: name) else {
                throw ProfileFormatError("'flow' is not one of \(LoginFlowKind.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            flow = kind
        }
        deviceAuthorizationEndpoint = try string("device_authorization_endpoint")
        pushedAuthorization = try flag("par")
        signsRequestObjects = try flag("request_object")
        dpop = try flag("dpop")
        fapi2 = try flag("fapi2")
        signedResponses = try flag("jarm")
        clientAuth = try string("client_auth")
        privateKeyFile = try string("private_key_file")
        keyID = try string("key_id")
        keyAlgorithm = try string("key_algorithm")
        assertionAudience = try string("assertion_audience")
        clientCertificateFile = try string("client_certificate_file")
        clientKeyFile = try string("client_key_file")
        caFile = try string("ca_file")
    }

    init() {}
}

struct ProfileFormatError: Error {
    let reason: String
    init(_ reason: String) { self.reason = reason }
}
