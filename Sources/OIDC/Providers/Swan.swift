public import Foundation

extension ProviderConfiguration {
    /// Swan (https://docs.swan.io): authorize at `https://oauth.swan.io/oauth2/auth`, token at
    /// `https://oauth.swan.io/oauth2/token`, scope `openid offline`, a confidential client whose
    /// server sends `client_id` and `client_secret` in the form body (`client_secret_post`).
    ///
    /// The JWKS location is left to discovery (`https://oauth.swan.io/.well-known/openid-configuration`).
    public static var swan: ProviderConfiguration {
        ProviderConfiguration(
            issuer: "https://oauth.swan.io",
            authorizationEndpoint: URL(string: "https://oauth.swan.io/oauth2/auth")!,
            tokenEndpoint: URL(string: "https://oauth.swan.io/oauth2/token")!,
            defaultScopes: ["openid", "offline"],
            clientAuthentication: .clientSecretPost
        )
    }
}

/// The redirect Swan sends after a consent flow: `consentId`, `env`, `status`, optional `resourceId`.
///
/// - Important: the status in the URL proves nothing: anyone can open the redirect URL with
///   `status=Accepted`. Before acting on a consent, read it from Swan's API with the `consentId`
///   (server side) and act on the status Swan returns there.
public struct SwanConsentCallback: Sendable, Equatable {
    /// Swan's environment.
    public enum Environment: Sendable, Hashable {
        case sandbox
        case live
        /// A value this version does not know, kept as sent.
        case unknown(String)

        public init(rawValue: String) {
            switch rawValue {
            case "Sandbox": self = .sandbox
            case "Live": self = .live
            default: self = .unknown(rawValue)
            }
        }

        public var rawValue: String {
            switch self {
            case .sandbox: "Sandbox"
            case .live: "Live"
            case .unknown(let value): value
            }
        }
    }

    /// The consent's status as the redirect reports it (unverified; see the type's note).
    public enum Status: Sendable, Hashable, CaseIterable {
        case accepted, customerRefused, operationCommitting, credentialRefused
        case created, started, expired, failed, canceled
        /// A status this version does not know, kept as sent.
        case unknown(String)

        public static let allCases: [Status] = [
            .accepted, .customerRefused, .operationCommitting, .credentialRefused,
            .created, .started, .expired, .failed, .canceled,
        ]

        public init(rawValue: String) {
            self = Self.allCases.first { $0.rawValue == rawValue } ?? .unknown(rawValue)
        }

        public var rawValue: String {
            switch self {
            case .accepted: "Accepted"
            case .customerRefused: "CustomerRefused"
            case .operationCommitting: "OperationCommitting"
            case .credentialRefused: "CredentialRefused"
            case .created: "Created"
            case .started: "Started"
            case .expired: "Expired"
            case .failed: "Failed"
            case .canceled: "Canceled"
            case .unknown(let value): value
            }
        }
    }

    public var consentID: String
    public var environment: Environment
    public var status: Status
    public var resourceID: String?

    /// Parses a Swan consent redirect.
    ///
    /// - Throws: ``OIDCError/Code/missingParameter`` without `consentId`, `env` or `status`;
    ///   ``OIDCError/Code/duplicateParameter`` for a repeated parameter;
    ///   ``OIDCError/Code/malformedURL`` for broken encoding.
    public init(url: URL) throws(OIDCError) {
        let query = URLComponents(url: url, resolvingAgainstBaseURL: false)?.percentEncodedQuery ?? ""
        let parameters = try FormEncoding.decode(query)
        func required(_ name: String) throws(OIDCError) -> String {
            guard let value = parameters[name], !value.isEmpty else {
                throw OIDCError(
                    .missingParameter, "The Swan consent redirect has no '\(name)' parameter.", context: ["parameter": name]
                )
            }
            return value
        }
        consentID = try required("consentId")
        environment = Environment(rawValue: try required("env"))
        status = Status(rawValue: try required("status"))
        resourceID = parameters["resourceId"].flatMap { $0.isEmpty ? nil : $0 }
    }
}
