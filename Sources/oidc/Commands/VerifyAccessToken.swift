import ArgumentParser
import Foundation
import OIDC
import OIDCResourceServer

/// `oidc verify --kind access`: one JWT access token through OIDCResourceServer's rules, as
/// `oidc resource-server` checks the tokens it receives (RFC 9068 §4), without a server: the token
/// is judged as a bearer token sent to the resource `--audience` names.
struct AccessTokenVerification {
    let command: Verify

    /// Where the token is "sent": the kit needs a resource URL, which plays no part in a bearer
    /// token's checks (the audience does).
    static let placeholderResource = URL(string: "http://127.0.0.1/")!

    func run(_ token: String) async throws {
        let moment = command.now.map { Date(timeIntervalSince1970: $0) } ?? CLIClock.now()
        let scopes = try ScopeTokens.parse(command.requireScope, flag: "--require-scope")
        let outcome: Result<VerifiedAccess, AccessRefusal> = try await withNIOHTTPTransport(logger: CLILog.logger(.transport)) { transport in
            let keys: JWKSCache
            do { keys = try await ResourceServerSources.keys(from: command.jwks, transport: transport) } catch {
                throw await JWKSSource.discoveryDocumentRefusal(command.jwks, after: error) ?? error
            }
            var configuration = ResourceServer.Configuration(
                resource: Self.placeholderResource, issuers: [TrustedIssuer(issuer: command.issuer, keys: keys)]
            )
            configuration.audiences = [command.audience]
            configuration.leeway = command.leeway
            configuration.maximumTokenLength = TokenInput.maximumLength
            configuration.metadataURL = nil
            configuration.now = { moment }
            let server = try ResourceServer(configuration)
            let request = ResourceRequest(method: "GET", url: Self.placeholderResource, headers: HTTPHeaders([("Authorization", "Bearer " + token)]))
            // The scopes are checked below, where the missing ones can be named.
            do throws(AccessRefusal) { return .success(try await server.verify(request, requiring: [])) } catch { return .failure(error) }
        }
        switch outcome {
        case .success(let access):
            let missing = scopes.filter { !access.scopes.contains($0) }
            guard missing.isEmpty else {
                let granted = access.scopes.isEmpty ? "none" : access.scopes.sorted().joined(separator: " ")
                Console.error(
                    "oidc: error: the access token is refused (insufficient_scope): it lacks the scope\(missing.count == 1 ? "" : "s") --require-scope names: \(UntrustedText.sanitized(missing.joined(separator: " "), limit: 300)) (it grants: \(UntrustedText.sanitized(granted, limit: 300)))")
                throw ExitCode(ExitCodes.authenticationFailed)
            }
            Console.output(JSONOutput.safe(JSONValue.object(access.claims).jsonText))
        case .failure(let refusal):
            if refusal.rule == .boundTokenAsBearer {
                Console.error("oidc: error: the access token is DPoP-bound (cnf.jkt): its proof of possession can only be checked by the resource it is sent to, with a proof (oidc resource-server does)")
            } else {
                Console.error("oidc: error: the access token is refused (\(refusal.rule.name)): \(UntrustedText.sanitized(refusal.message, limit: 300))")
            }
            throw ExitCode(refusal.status == 503 ? ExitCodes.temporarilyUnavailable : ExitCodes.authenticationFailed)
        }
    }
}

extension Verify {
    /// `--kind logout`: OIDCResourceServer's `LogoutTokenVerifier`, every rule but the `jti`
    /// replay check (one command has no memory of earlier tokens; the receiver keeps it).
    func verifyLogoutToken(_ token: String) async throws {
        let keys = try await JWKSSource.load(jwks)
        var verifier = LogoutTokenVerifier(issuer: issuer, clientID: audience, replayStore: InMemoryReplayStore())
        verifier.leeway = leeway
        verifier.acceptsGenericType = acceptGenericType
        verifier.maximumTokenLength = TokenInput.maximumLength
        let moment = now.map { Date(timeIntervalSince1970: $0) } ?? CLIClock.now()
        do {
            let verified = try verifier.verifyWithoutReplayCheck(token, keys: keys, now: moment)
            Console.output(JSONOutput.safe(JSONValue.object(verified.claims).jsonText))
        } catch {
            Console.error("oidc: error: the logout token is refused (\(error.rule.rawValue)): \(UntrustedText.sanitized(error.message, limit: 300))")
            throw ExitCode(ExitCodes.authenticationFailed)
        }
    }
}
