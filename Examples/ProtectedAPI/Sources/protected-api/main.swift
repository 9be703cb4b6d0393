import Foundation
import OIDC
import OIDCResourceServer
import ProtectedAPI
import ResourceServerFlags

// protected-api: oidc resource-server's flags and answers, the API in Hummingbird (OIDCHummingbird);
// `protected-api --demo` runs a provider beside it and walks a client through.
if CommandLine.arguments.dropFirst().first == "--demo" {
    do { try await Demo.run() } catch {
        print("protected-api --demo: \(error)")
        exit(1)
    }
    exit(0)
}
await CommandLineServer.main("protected-api") { flags, base, port, logger, listening in
    try await withNIOHTTPTransport { transport in
        let server = try ResourceServer(try await flags.configuration(base: base, transport: transport))
        let router = ProtectedAPI.router(server, scopes: flags.scopes, authentication: flags.authentication, detailTypes: flags.detailTypes)
        try await ProtectedAPI.serve(router, host: flags.host, port: port, logger: logger, listening: listening)
    }
}
