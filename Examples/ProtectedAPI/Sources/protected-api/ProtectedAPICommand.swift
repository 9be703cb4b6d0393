import ArgumentParser
import Foundation
import OIDC
import OIDCResourceServer
import ProtectedAPI

@main
struct ProtectedAPICommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "protected-api",
        abstract: "Serves an orders API that takes the access tokens of one authorization server: bearer or DPoP-bound.",
        discussion: """
            GET /me needs any valid token, GET /orders the scope orders:read, POST /orders orders:write; \
            the RFC 9728 metadata is at /.well-known/oauth-protected-resource (path-inserted when \
            --resource has a path). With --demo, a provider runs on 127.0.0.1 and a client walks \
            through bearer and DPoP requests, refusals included.
            """
    )

    @Option(help: "The authorization server whose access tokens this API takes (its discovery document gives the keys).")
    var issuer: String?

    @Option(help: "This API's resource identifier, the audience its tokens must name: its public URL, such as https://api.example/.")
    var resource: String?

    @Option(help: "Where clients reach the API when a proxy stands in front (https://api.example): DPoP proofs name that URL.")
    var publicOrigin: String?

    @Option(help: "The address to listen on.")
    var host = "127.0.0.1"

    @Option(help: "The port to listen on.")
    var port = 8080

    @Option(help: "DPoP: off, allowed or required.")
    var dpop = "allowed"

    @Flag(help: "Require server-issued DPoP nonces (RFC 9449 §8).")
    var nonce = false

    @Flag(help: "Run a provider on 127.0.0.1 and walk a client through bearer and DPoP requests.")
    var demo = false

    func run() async throws {
        guard let mode = ResourceServer.DPoPSettings.Mode(rawValue: dpop) else { throw ValidationError("--dpop: off, allowed or required") }
        if demo {
            try await Demo.run()
            return
        }
        guard let issuer, let resource = resource.flatMap(URL.init(string:)) else {
            throw ValidationError("--issuer and --resource are required (or --demo)")
        }
        let origin = try publicOrigin.map { text in
            guard let url = URL(string: text), url.scheme == "https", url.host() != nil, url.path().isEmpty || url.path() == "/" else {
                throw ValidationError("--public-origin: an https origin such as https://api.example")
            }
            return url
        }
        try await withNIOHTTPTransport { transport in
            guard let jwksURI = try await ProviderDiscovery(transport: transport).metadata(for: issuer).jwksURI else {
                throw ValidationError("\(issuer) publishes no jwks_uri")
            }
            var configuration = ResourceServer.Configuration(
                resource: resource, issuers: [TrustedIssuer(issuer: issuer, jwksURI: jwksURI, transport: transport)]
            )
            configuration.scopesSupported = OrdersAPI.scopes
            configuration.publicOrigin = origin
            configuration.dpop.mode = mode
            if nonce { configuration.dpop.nonces = try DPoPServerNonces() }
            let server = try ResourceServer(configuration)
            // Written at once, also when stdout is a pipe or a log file.
            FileHandle.standardOutput.write(Data("protected-api: http://\(host):\(port), tokens of \(issuer) for \(resource.absoluteString)\n".utf8))
            try await serve(OrdersAPI.router(server: server), host: host, port: port)
        }
    }
}
