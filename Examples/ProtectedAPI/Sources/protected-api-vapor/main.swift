import ProtectedAPIVapor
import OIDC
import OIDCResourceServer
import ResourceServerFlags

// protected-api-vapor: oidc resource-server's flags and answers, the API in Vapor (OIDCVapor).
await CommandLineServer.main("protected-api-vapor") { flags, base, port, logger, listening in
    try await withNIOHTTPTransport { transport in
        let server = try ResourceServer(try await flags.configuration(base: base, transport: transport))
        try await ProtectedAPIVapor.serve(host: flags.host, port: port, logger: logger, listening: listening) { app in
            ProtectedAPIVapor.routes(app, server, scopes: flags.scopes, authentication: flags.authentication, detailTypes: flags.detailTypes)
        }
    }
}
