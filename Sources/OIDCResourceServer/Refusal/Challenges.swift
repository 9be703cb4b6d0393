internal import Foundation
internal import OIDC

/// The challenges a refusal carries (RFC 6750 §3, RFC 9449 §7.1, RFC 9728 §5.1): one
/// `WWW-Authenticate` field per scheme the resource takes, the one with the error first, each
/// with `resource_metadata`, the DPoP one with `algs`; and `DPoP-Nonce` when nonces are on.
struct Challenges: Sendable {
    private let schemes: [Denial.Scheme]
    private let algorithms: String
    private let metadataURL: String?
    private let nonces: DPoPServerNonces?

    init(_ configuration: ResourceServer.Configuration) {
        switch configuration.dpop.mode {
        case .off: schemes = [.bearer]
        case .allowed: schemes = [.bearer, .dpop]
        case .required: schemes = [.dpop]
        }
        algorithms = JWSAlgorithm.allCases.filter { configuration.dpop.algorithms.contains($0) && !$0.isHMACAlgorithm }.map(\.rawValue)
            .joined(separator: " ")
        metadataURL = configuration.metadataURL?.absoluteString
        nonces = configuration.dpop.mode == .off ? nil : configuration.dpop.nonces
    }

    func refusal(_ denial: Denial, usedScheme: Denial.Scheme?, now: Date) -> AccessRefusal {
        guard !denial.serverFailure else {
            return AccessRefusal(rule: denial.rule, error: nil, message: denial.message, status: 503, headers: HTTPHeaders())
        }
        var errorScheme = denial.scheme ?? usedScheme ?? schemes[0]
        if !schemes.contains(errorScheme) { errorScheme = schemes[0] }
        var headers = HTTPHeaders()
        let scope = denial.scope.isEmpty ? nil : denial.scope.sorted().joined(separator: " ")
        for scheme in [errorScheme] + schemes.filter({ $0 != errorScheme }) {
            headers.add("WWW-Authenticate", challenge(scheme, denial: scheme == errorScheme ? denial : nil, scope: scope))
        }
        if let nonces, schemes.contains(.dpop) { headers.add("DPoP-Nonce", nonces.current(at: now)) }
        return AccessRefusal(
            rule: denial.rule, error: denial.code?.rawValue, message: denial.message, status: denial.code?.status ?? 401, headers: headers
        )
    }

    /// `scope` is on every challenge (RFC 6750 §3) when the refusal names the route's scopes:
    /// `insufficient_scope`, and a request without a token.
    private func challenge(_ scheme: Denial.Scheme, denial: Denial?, scope: String?) -> String {
        var parameters: [String] = []
        if let denial, let code = denial.code {
            parameters.append(#"error="\#(code.rawValue)""#)
            parameters.append(#"error_description="\#(Self.quotedContent(denial.message))""#)
            // RFC 9470 §3: what a new authentication must be, as its examples write them.
            if let required = denial.authentication {
                if !required.acrValues.isEmpty { parameters.append(#"acr_values="\#(Self.quotedContent(required.acrValues.joined(separator: " ")))""#) }
                if let maxAge = required.maxAge { parameters.append(#"max_age="\#(maxAge)""#) }
            }
        }
        if let scope {
            parameters.append(#"scope="\#(Self.quotedContent(scope))""#)
        }
        if scheme == .dpop { parameters.append(#"algs="\#(algorithms)""#) }
        if let metadataURL { parameters.append(#"resource_metadata="\#(Self.quotedContent(metadataURL))""#) }
        let name = scheme == .dpop ? "DPoP" : "Bearer"
        return parameters.isEmpty ? name : name + " " + parameters.joined(separator: ", ")
    }

    /// The inside of a quoted-string (RFC 9110 §5.6.4) limited to RFC 6750 §3's characters for
    /// `error_description` (printable ASCII): `"` and `\` escaped, anything else dropped.
    static func quotedContent(_ text: String) -> String {
        var output = ""
        output.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar.value {
            case 0x22, 0x5C:
                output.append("\\")
                output.unicodeScalars.append(scalar)
            case 0x20...0x7E:
                output.unicodeScalars.append(scalar)
            default:
                continue
            }
        }
        return output
    }
}
