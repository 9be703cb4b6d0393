import ArgumentParser
import OIDCTesting

/// `oidc provider`'s and `oidc resource-server`'s bounds on connections: how many at once, how long
/// one may sit idle, how long a request head may take (``HTTPConnectionLimits``, whose defaults
/// these are). A connection over the limit is closed as soon as it is accepted.
struct ServerLimitOptions: ParsableArguments {
    @Option(help: "Connections open at once; one more is closed as soon as it is accepted (1 to 65535).")
    var maxConnections: Int = HTTPConnectionLimits().maximumConnections

    @Option(help: "Close a connection that sends nothing for this many seconds while no request is being answered (1 to 3600).")
    var idleTimeout: Int = Int(HTTPConnectionLimits().idleTimeout.components.seconds)

    @Option(help: "Close a connection whose request head is not complete this many seconds after its first byte (1 to 3600).")
    var headerTimeout: Int = Int(HTTPConnectionLimits().requestHeadTimeout.components.seconds)

    func validate() throws {
        guard (1...65_535).contains(maxConnections) else { throw ValidationError("--max-connections must be 1 to 65535") }
        guard (1...3600).contains(idleTimeout) else { throw ValidationError("--idle-timeout must be 1 to 3600 seconds") }
        guard (1...3600).contains(headerTimeout) else { throw ValidationError("--header-timeout must be 1 to 3600 seconds") }
    }

    var limits: HTTPConnectionLimits {
        HTTPConnectionLimits(maximumConnections: maxConnections, idleTimeout: .seconds(idleTimeout), requestHeadTimeout: .seconds(headerTimeout))
    }
}
