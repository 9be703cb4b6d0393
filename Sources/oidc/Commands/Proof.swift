import ArgumentParser
import Foundation
import OIDC

/// `oidc proof`: a DPoP proof (RFC 9449) for one request, signed with the stored login's key.
struct Proof: AsyncParsableCommand, LoggingCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print a DPoP proof for one request, signed with the key of a DPoP-bound login (oidc login --dpop).",
        discussion: """
            For scripts that call APIs themselves: \
            printf 'Authorization: DPoP %s\\nDPoP: %s\\n' "$(oidc token)" "$(oidc proof --method GET --url URL)" | curl -H @- URL. \
            The headers reach curl through a pipe (-H @-, curl 7.55 or later; printf is built into \
            the shell): given as -H arguments, they would be in /proc/PID/cmdline, \
            where any local user can read them while curl runs. oidc request does all of this itself. \
            Run oidc token first: the proof's ath is the hash of the access token stored now, and \
            oidc proof never refreshes (it reads the store, nothing is sent). Each proof is for one \
            request: a server refuses a proof used twice. The proof carries the DPoP-Nonce the \
            server last gave oidc request for this login (the 16 most recent origins are remembered); \
            --nonce gives the server's latest yourself, --no-nonce sends none. \
            Exit codes: 0; 2 for a login that is not DPoP-bound or whose key is missing; 4 when \
            nobody is logged in.
            """
    )

    @OptionGroup var logging: LoggingOptions

    @OptionGroup var storeOptions: StoreOptions

    @Option(help: "The request's method (htm), such as GET or POST.")
    var method: String

    @Option(help: "The request's URL (htu); its query and fragment are left out of the proof.")
    var url: String

    @Option(help: "The server's latest DPoP-Nonce (default: the one remembered for the URL's origin from oidc request).")
    var nonce: String?

    @Flag(help: "Send no nonce, not even a remembered one.")
    var noNonce = false

    @Flag(help: "Leave out ath (the access token's hash): for a proof to the token endpoint, which gets no access token.")
    var noAccessToken = false

    func validate() throws {
        guard let target = URL(string: url), let scheme = target.scheme?.lowercased(), ["http", "https"].contains(scheme), target.host != nil else {
            throw ValidationError("--url must be an absolute http(s) URL, not '\(UntrustedText.sanitized(url))'")
        }
        if noNonce, nonce != nil { throw ValidationError("--nonce and --no-nonce exclude each other") }
        guard !method.isEmpty, method.utf8.allSatisfy({ (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0) || $0 == 0x2D }) else {
            throw ValidationError("--method: '\(UntrustedText.sanitized(method))' is not an HTTP method")
        }
    }

    func run() async throws {
        guard let target = URL(string: url) else { throw ValidationError("--url is not a URL") }
        let stored = try ProfileLogin.load(storeOptions)
        let login = stored.login
        let provable: DPoPKey?
        do { provable = try login.dpopProofKey(describedAs: "of profile '\(storeOptions.profileName)'") } catch {
            // Exit 2, as documented: the login is there, its key is not (oidc token says 4 for the same login).
            throw OIDCError(.invalidArgument, error.message + " (oidc login --dpop --profile \(storeOptions.profileName))", context: error.context)
        }
        guard let key = provable else {
            throw OIDCError(
                .invalidArgument,
                "The login of profile '\(storeOptions.profileName)' is not DPoP-bound, so it needs no proof: log in with --dpop for DPoP-bound tokens.",
                context: ["profile": storeOptions.profileName]
            )
        }
        let chosen = noNonce ? nil : nonce ?? RememberedNonces.nonce(for: target, in: login)
        let proof = try key.proof(
            method: method.uppercased(), url: target, accessToken: noAccessToken ? nil : login.tokens.accessToken, nonce: chosen)
        Console.output(proof)
    }
}
