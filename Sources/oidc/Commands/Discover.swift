import ArgumentParser
import Foundation
import OIDC

/// `oidc discover ISSUER`: the provider's validated metadata.
struct Discover: AsyncParsableCommand, LoggingCommand {
    static let configuration = CommandConfiguration(
        abstract: "Fetch and validate a provider's metadata (OpenID Connect Discovery, RFC 8414).",
        discussion: """
            Prints the metadata document as JSON on stdout. The document's issuer must equal ISSUER \
            exactly (exit 4 otherwise); every endpoint must be https (http only on loopback). An \
            unreachable or failing provider exits 5.
            """
    )

    @OptionGroup var logging: LoggingOptions

    @Argument(help: "The issuer URL, such as https://login.example.com.")
    var issuer: String

    @Option(help: "Seconds to wait for the provider (default: $OIDC_HTTP_TIMEOUT, else 15).")
    var timeout: Int?

    func validate() throws {
        _ = try NetworkTimeout.seconds(flag: timeout, default: 15)
        do { _ = try ProviderDiscovery.wellKnownURLs(for: issuer) } catch { throw ValidationError("ISSUER: \(error.message)") }
    }

    func run() async throws {
        let options = HTTPRequestOptions(timeout: .seconds(try NetworkTimeout.seconds(flag: timeout, default: 15)))
        let metadata = try await withNIOHTTPTransport(logger: CLILog.logger(.transport)) { transport in
            try await ProviderDiscovery(transport: transport, requestOptions: options, logger: CLILog.logger(.discovery)).metadata(for: issuer)
        }
        let object = try JSONSerialization.jsonObject(with: Data(metadata.rawJSON.utf8))
        let pretty = try JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
        Console.output(JSONOutput.safe(String(decoding: pretty, as: UTF8.self)))
    }
}
