import ArgumentParser
import OIDC

/// `oidc decode`: show a JWT's header and claims without verifying anything.
struct Decode: ParsableCommand, LoggingCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show a JWT's header and claims, UNVERIFIED (use 'oidc verify' to trust them).",
        discussion: """
            Prints {"unverified": true, "header": …, "claims": …} on stdout. Nothing is checked: not \
            the signature, not the issuer, not the expiry.
            """
    )

    @OptionGroup var logging: LoggingOptions

    @Argument(help: "The token, or - to read it from standard input.")
    var token: String

    func run() throws {
        let jwt: UnverifiedJWT
        do { jwt = try UnverifiedJWT(try TokenInput.read(token), maximumLength: TokenInput.maximumLength) } catch let error as OIDCError {
            throw ValidationError("TOKEN: \(error.message)")
        }
        Console.error("oidc: warning: UNVERIFIED: the signature and claims of this token were not checked")
        // Anyone's token: its text as it is, terminal controls escaped.
        Console.output(JSONOutput.safe(#"{"unverified":true,"header":\#(jwt.headerJSON),"claims":\#(jwt.claimsJSON)}"#))
    }
}
