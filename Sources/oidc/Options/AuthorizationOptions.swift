import ArgumentParser
import Foundation
import OIDC

/// The options that shape an authorization request, shared by `oidc login` and `oidc authorize-url`:
/// the provider (a preset or an issuer), the client, and the request's parameters.
struct AuthorizationOptions: ParsableArguments {
    enum Provider: String, ExpressibleByArgument, CaseIterable {
        case generic, schibsted, swan
    }

    @Option(help: "The provider preset: generic (with --issuer), schibsted (with --environment) or swan.")
    var provider: Provider?

    @Option(help: "The issuer URL: its discovery document names the endpoints (login, and authorize-url without --authorization-endpoint); the callback's iss is checked against it.")
    var issuer: String?

    @Option(help: "Schibsted environment: pre, sweden (com), norway (no), finland (fi), denmark (dk), or an https base URL.")
    var environment: String?

    @Option(help: "The client id.")
    var clientId: String?

    @Option(help: "Scope values, separated by spaces (\"openid profile\") or the option repeated (default: the provider's; login asks for openid, plus offline_access when the provider offers it). On a profile that keeps scopes, login asks for those and these together (a step-up; --reset asks for these alone).")
    var scope: [String] = []

    @Option(name: .customLong("param"), help: "An extra authorization parameter as name=value; repeat for several.")
    var parameters: [String] = []

    @Option(help: "The prompt (login, consent, select_account, none; Schibsted's default: select_account).")
    var prompt: String?

    @Option(help: "The login_hint: whom the provider should sign in (with oidc login --flow ciba, required: whom it asks to approve on their device). Remembered by oidc login.")
    var loginHint: String?

    @Option(help: "The acr_values (generic and Swan; Schibsted uses --mfa).")
    var acrValues: String?

    @Option(help: "The max_age in seconds; the ID token's auth_time is then checked.")
    var maxAge: Int?

    @Option(help: "The ui_locales: preferred languages as space-separated BCP 47 tags.")
    var uiLocales: String?

    @Option(help: "Schibsted multi-factor method: \(Schibsted.MFAMethod.allCases.map(\.rawValue).joined(separator: ", ")).")
    var mfa: String?

    /// The checks that need no other option's value: each names its flag.
    func validate() throws {
        if let clientId, clientId.isEmpty { throw ValidationError("--client-id must not be empty") }
        if let maxAge, maxAge < 0 { throw ValidationError("--max-age must be zero or more seconds") }
        if let environment, Schibsted.Environment(name: environment) == nil {
            throw ValidationError("--environment: unknown Schibsted environment '\(environment)'")
        }
        if let mfa, Schibsted.MFAMethod(rawValue: mfa) == nil { throw ValidationError("--mfa: unknown method '\(mfa)'") }
        if issuer != nil, let provider, provider != .generic { throw ValidationError("--issuer is for --provider generic only") }
        if let issuer {
            do { _ = try ProviderDiscovery.wellKnownURLs(for: issuer) } catch { throw ValidationError("--issuer: \(error.message)") }
        }
        _ = try scopes()
        var names = Set<String>()
        for parameter in try Self.parseParameters(parameters) {
            if AuthorizationRequest.librarySetParameterNames.contains(parameter.name) {
                throw ValidationError("--param cannot set '\(parameter.name)'; use its own option")
            }
            guard names.insert(parameter.name).inserted else { throw ValidationError("--param: '\(parameter.name)' is given twice") }
        }
    }

    /// The provider-specific rules, once the provider is known (from the flags or the profile).
    static func validate(_ profile: Profile) throws {
        if profile.provider == .schibsted {
            guard let name = profile.environment else { throw ValidationError("--environment is required with --provider schibsted") }
            if profile.acrValues != nil { throw ValidationError("--acr-values is not for Schibsted; use --mfa") }
            if profile.mfa != nil, profile.prompt != nil {
                throw ValidationError("--mfa and --prompt exclude each other: Schibsted sends acr_values or prompt, never both")
            }
            if let environment = Schibsted.Environment(name: name), let method = profile.mfa.flatMap(Schibsted.MFAMethod.init(rawValue:)) {
                do throws(OIDCError) {
                    _ = try AuthorizationRequest.schibsted(environment: environment, clientID: "c", redirectURI: "com.example:/login", mfa: method)
                } catch { throw ValidationError("--mfa: \(error.message)") }
            }
        } else {
            if profile.environment != nil { throw ValidationError("--environment is for --provider schibsted only") }
            if profile.mfa != nil { throw ValidationError("--mfa is for --provider schibsted only; use --acr-values") }
        }
    }

    /// The scope tokens of `--scope`: each value split on spaces, checked, repeats dropped (``ScopeTokens``).
    func scopes() throws -> [String] { try ScopeTokens.parse(scope) }

    /// These flags as a profile's settings, for a command that shapes its request as a login does
    /// but remembers nothing (`oidc authorize-url`).
    func profile() throws -> Profile {
        var profile = Profile()
        try profile.lay(self)
        return profile
    }

    /// `--param name=value` values as parameters.
    static func parseParameters(_ parameters: [String]) throws -> [OAuthParameter] {
        try parameters.map { pair in
            guard let equals = pair.firstIndex(of: "="), equals != pair.startIndex else {
                throw ValidationError("--param needs name=value, got '\(pair)'")
            }
            return OAuthParameter(String(pair[..<equals]), String(pair[pair.index(after: equals)...]))
        }
    }
}

extension Profile {
    /// Lays the profile's request settings over `request`: for Schibsted, the preset's own request
    /// in its place (its scopes, `prompt` or MFA, with the same client, redirect URI and extra
    /// scopes); otherwise the prompt, login hint and acr values (the ID token's `acr` required to be
    /// one of them); then, for every provider, `max_age` (its `auth_time` checked against it),
    /// `ui_locales` and the extra parameters.
    func configure(_ request: inout AuthorizationRequest) throws(OIDCError) {
        if provider == .schibsted, let name = environment, let environment = Schibsted.Environment(name: name) {
            request = try AuthorizationRequest.schibsted(
                environment: environment, clientID: request.clientID, redirectURI: request.redirectURI, extraScopes: scopes,
                mfa: mfa.flatMap(Schibsted.MFAMethod.init(rawValue:)), prompt: prompt, loginHint: loginHint
            )
        } else {
            request.prompt = prompt
            request.loginHint = loginHint
            request.acrValues = acrValues
            // What was asked for is required (a step-up, RFC 9470): an ID token with another acr is refused (exit 4).
            request.requiredACRValues = acrValues.map { $0.split(separator: " ").map(String.init) }.flatMap { $0.isEmpty ? nil : $0 }
        }
        request.maxAge = maxAge
        request.uiLocales = uiLocales
        request.additionalParameters += parameters
    }

    /// Runs `build`, then builds the URL once, so that every clash of the settings shows here, as a
    /// usage error (exit 2) rather than after a listener started.
    static func checkedRequest(_ build: () throws -> AuthorizationRequest) throws -> AuthorizationRequest {
        do {
            let request = try build()
            _ = try request.url()
            return request
        } catch let error as OIDCError where error.category == .configuration || error.code == .duplicateParameter {
            throw ValidationError("\(error.message)")
        }
    }
}
