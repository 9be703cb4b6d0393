import ArgumentParser
import Foundation
import OIDC

/// `oidc verify`: verify an ID token's, or an access token's, signature and claims.
struct Verify: AsyncParsableCommand, LoggingCommand {
    static let configuration = CommandConfiguration(
        abstract: "Verify an ID token (signature through OpenSSL, OIDC Core claim rules), or an access token (--kind access).",
        discussion: """
            Prints the verified claims as JSON on stdout and exits 0. A rejected token exits 4 with the \
            reason on stderr; a usage mistake exits 2; a JWKS URL that cannot be reached exits 5. \
            --kind access checks an RFC 9068 JWT access token as oidc resource-server does (typ at+jwt, \
            iss, aud, exp, nbf, iat, sub, client_id, jti, --require-scope); a DPoP- or certificate-bound \
            one is refused, since its proof of possession cannot be checked here. --kind logout checks a \
            back-channel logout token (OIDC Back-Channel Logout 1.0 §2.6; --audience is the client id); \
            its jti replay check is the receiver's.
            """
    )

    @OptionGroup var logging: LoggingOptions

    enum IssuerMatch: String, ExpressibleByArgument, CaseIterable {
        case exact
        case ignoreTrailingSlash = "ignore-trailing-slash"
    }

    @Argument(help: "The token, or - to read it from standard input.")
    var token: String

    @Option(help: "What the token is: id (an ID token, the default), access (an RFC 9068 JWT access token) or logout (a back-channel logout token).")
    var kind: Kind = .id

    enum Kind: String, ExpressibleByArgument, CaseIterable {
        case id, access, logout
    }

    @Option(help: "The expected issuer (iss).")
    var issuer: String

    @Option(help: "The audience (aud) the token must carry: the client id for an ID token, the resource for an access token.")
    var audience: String

    @Option(help: "The provider's keys: a JWKS file, or an https URL (http only on loopback).")
    var jwks: String

    @Option(help: "The nonce sent in the authorization request (not checked when omitted).")
    var nonce: String?

    @Option(help: "Verify as of this Unix time instead of now.")
    var now: Double?

    @Option(help: "Clock leeway in seconds for exp, iat, nbf and auth_time.")
    var leeway: Double = 60

    @Option(help: "The access token issued with the ID token, to check at_hash: the token, @FILE, or - for standard input (on the command line it is visible in ps).")
    var accessToken: String?

    @Option(help: "The max_age sent in the authorization request, to check auth_time.")
    var maxAge: Int?

    @Option(help: "How to compare the issuer: exact, or ignore-trailing-slash (Schibsted).")
    var issuerMatch: IssuerMatch = .exact

    @Option(help: "--kind access: a scope the token must grant; repeat for several.")
    var requireScope: [String] = []

    @Flag(help: "--kind logout: also take a token typed JWT or JOSE, not logout+jwt (glewlwyd, Keycloak type theirs so); its events member and the absence of a nonce still keep an ID token out.")
    var acceptGenericType = false

    func validate() throws {
        if let now, !now.isFinite || now < 0 { throw ValidationError("--now must be a Unix time in seconds") }
        if !leeway.isFinite || leeway < 0 || leeway > 86_400 { throw ValidationError("--leeway must be 0 to 86400 seconds") }
        if let maxAge, maxAge < 0 { throw ValidationError("--max-age must be zero or more seconds") }
        if let nonce, nonce.isEmpty { throw ValidationError("--nonce must not be empty") }
        try TokenInput.checkOneStandardInput([("TOKEN", token), ("--access-token", accessToken)])
        if acceptGenericType, kind != .logout { throw ValidationError("--accept-generic-type is for logout tokens; add --kind logout") }
        if kind != .id {
            let idOnly = [("--nonce", nonce != nil), ("--access-token", accessToken != nil), ("--max-age", maxAge != nil), ("--issuer-match", issuerMatch != .exact)]
            if let (flag, _) = idOnly.first(where: \.1) { throw ValidationError("\(flag) is for ID tokens; leave it out with --kind \(kind.rawValue)") }
        }
        if kind == .access {
            _ = try ScopeTokens.parse(requireScope, flag: "--require-scope")
            try ResourceServerCommand.checkAudience(audience)
        } else if !requireScope.isEmpty {
            throw ValidationError("--require-scope is for access tokens: add --kind access")
        }
    }

    func run() async throws {
        let token = try TokenInput.read(self.token)
        if kind == .access { return try await AccessTokenVerification(command: self).run(token) }
        if kind == .logout { return try await verifyLogoutToken(token) }
        let keys = try await JWKSSource.load(jwks)
        var verifier = IDTokenVerifier(issuer: issuer, clientID: audience, nonce: nonce.map { .expected($0) } ?? .notChecked)
        verifier.leeway = leeway
        verifier.maxAge = maxAge
        verifier.accessToken = try accessToken.map { Secret(try TokenInput.secret($0, flag: "--access-token")) }
        verifier.issuerMatching = issuerMatch == .exact ? .exact : .ignoringTrailingSlash
        verifier.maximumTokenLength = TokenInput.maximumLength
        let moment = now.map { Date(timeIntervalSince1970: $0) } ?? CLIClock.now()
        let verified: IDToken
        do { verified = try verifier.verify(token, keys: keys, now: moment) } catch {
            let failure: OIDCError = error
            if failure.code == .keyNotFound, !keys.skipped.isEmpty {
                Console.error("oidc: note: the JWKS has keys this library skipped: \(keys.skipped.joined(separator: "; "))")
            }
            throw Self.hintingAccessToken(failure, token: token)
        }
        // Said of a token that passed, not before a refusal it has nothing to do with (an access token's).
        if nonce == nil { Console.error("oidc: note: no --nonce given; the nonce is not checked") }
        Console.output(JSONOutput.safe(verified.claims.rawJSON))
    }

    /// The refusal of an ID token that is an RFC 9068 access token (typed `at+jwt`), with the flag
    /// that checks it as one; any other refusal as it is.
    static func hintingAccessToken(_ failure: OIDCError, token: String) -> OIDCError {
        guard let type = (try? UnverifiedJWT(token, maximumLength: TokenInput.maximumLength))?.header["typ"]?.stringValue,
            ["at+jwt", "application/at+jwt"].contains(type.lowercased())
        else { return failure }
        return OIDCError(failure.code, failure.message + " It is an access token: use --kind access.", context: failure.context)
    }
}
