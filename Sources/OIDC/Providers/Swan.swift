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
        /// `env=Sandbox`: Swan's sandbox.
        case sandbox
        /// `env=Live`: Swan's live (production) environment.
        case live
        /// A value this version does not know, kept as sent.
        case unknown(String)

        /// The environment for the `env` value: `Sandbox` or `Live` (case-sensitive), anything else kept
        /// as ``unknown(_:)``.
        public init(rawValue: String) {
            switch rawValue {
            case "Sandbox": self = .sandbox
            case "Live": self = .live
            default: self = .unknown(rawValue)
            }
        }

        /// The `env` value as Swan spells it (`Sandbox`, `Live`), or the unknown value as sent.
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
        /// `status=Accepted`.
        case accepted
        /// `status=CustomerRefused`.
        case customerRefused
        /// `status=OperationCommitting`.
        case operationCommitting
        /// `status=CredentialRefused`.
        case credentialRefused
        /// `status=Created`.
        case created
        /// `status=Started`.
        case started
        /// `status=Expired`.
        case expired
        /// `status=Failed`.
        case failed
        /// `status=Canceled`.
        case canceled
        /// A status this version does not know, kept as sent.
        case unknown(String)

        /// The statuses this version knows (every case but ``unknown(_:)``).
        public static let allCases: [Status] = [
            .accepted, .customerRefused, .operationCommitting, .credentialRefused,
            .created, .started, .expired, .failed, .canceled,
        ]

        /// The status for the `status` value as Swan spells it (`Accepted`, `CustomerRefused`, …;
        /// case-sensitive); anything else is kept as ``unknown(_:)``.
        public init(rawValue: String) {
            self = Self.allCases.first { $0.rawValue == rawValue } ?? .unknown(rawValue)
        }

        /// The `status` value as Swan spells it, or the unknown value as sent.
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

    /// `consentId`: the consent to look up in Swan's API before acting on it.
    public var consentID: String
    /// `env`: the Swan environment the consent belongs to.
    public var environment: Environment
    /// `status` as the redirect reports it: unverified, see the type's note.
    public var status: Status
    /// `resourceId`, when present and not empty: the resource the consent was about.
    public var resourceID: String?

    /// Parses a Swan consent redirect.
    ///
    /// - Throws: ``OIDCError/Code/missingParameter`` without `consentId`, `env` or `status`;
    ///   ``OIDCError/Code/duplicateParameter`` for a repeated parameter;
    ///   ``OIDCError/Code/malformedURL`` for broken encoding.
    public init(url: URL) throws(OIDCError) {
        let query = URLComponents(url: url, resolvingAgainstBaseURL: false)?.percentEncodedQuery ?? ""
        let parameters = try FormURLEncoding.decode(query)
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
