internal import Foundation
public import Logging
public import OIDC
public import PostgresNIO

/// Reads a libpq-style connection URL, as deployments pass in `DATABASE_URL`, into a
/// `PostgresClient.Configuration`.
///
/// `postgres://USER:PASSWORD@HOST:PORT/DATABASE?sslmode=MODE` (`postgresql://` too): user and
/// password are percent-decoded; the port defaults to 5432 and the database to the user's name.
/// `sslmode` is `require` when the URL does not say: the connection is TLS or nothing (PostgresNIO
/// verifies the certificate and the host name), so an attacker in the path cannot turn it into
/// plaintext. `verify-ca` and `verify-full` are taken as `require`. `disable` connects without TLS
/// (for a server on the same machine); `prefer` (and `allow`) tries TLS and falls back to plaintext
/// when the server, or an attacker in the path, declines it, which `logger` is told at `warning`.
/// A host that starts with `/` in `host=` (`postgres:///db?host=/var/run/postgresql`) is a Unix
/// socket directory, which needs no TLS.
public enum PostgresConnectionURL {
    /// The client configuration `url` describes.
    ///
    /// - Parameters:
    ///   - url: the connection URL; its password appears in no error and no log line.
    ///   - logger: where a URL that allows plaintext (`sslmode=prefer` or `allow`) is reported, at
    ///     `warning`: pass the store's logger. Nothing is logged by default.
    /// - Throws: `OIDCError.Code.invalidArgument` saying what is wrong, without the password.
    public static func configuration(
        from url: String, logger: Logger = Logger(label: "oidc.store", factory: { _ in SwiftLogNoOpLogHandler() })
    ) throws(OIDCError) -> PostgresClient.Configuration {
        guard let components = URLComponents(string: url), let scheme = components.scheme?.lowercased(),
            scheme == "postgres" || scheme == "postgresql"
        else {
            throw OIDCError(.invalidArgument, "The database URL must look like postgres://user:password@host:5432/database; check DATABASE_URL.")
        }
        var query: [String: String] = [:]
        for item in components.queryItems ?? [] { query[item.name] = item.value ?? "" }
        guard let user = components.percentEncodedUser.flatMap({ $0.removingPercentEncoding }), !user.isEmpty else {
            throw OIDCError(.invalidArgument, "The database URL names no user (postgres://USER@host/database).")
        }
        let password = components.percentEncodedPassword.flatMap { $0.removingPercentEncoding }
        let path = components.percentEncodedPath.removingPercentEncoding ?? ""
        let database = path.hasPrefix("/") && path.count > 1 ? String(path.dropFirst()) : user

        if let socketDirectory = query["host"], socketDirectory.hasPrefix("/") {
            let port = components.port ?? 5432
            return PostgresClient.Configuration(
                unixSocketPath: socketDirectory + "/.s.PGSQL.\(port)", username: user, password: password, database: database)
        }
        guard let host = components.host, !host.isEmpty else {
            throw OIDCError(.invalidArgument, "The database URL names no host (postgres://user@HOST:5432/database).")
        }
        let tls: PostgresClient.Configuration.TLS
        switch query["sslmode"] ?? "require" {
        case "disable": tls = .disable
        case let mode where mode == "prefer" || mode == "allow":
            logger.warning(
                "sslmode=\(mode) connects without TLS when the server, or an attacker in the path, declines it: the lock and row traffic can then be read and changed; say sslmode=require (or disable, for a server on this machine)",
                metadata: ["host": .untrusted(host, limit: 128), "port": .stringConvertible(components.port ?? 5432)])
            tls = .prefer(.makeClientConfiguration())
        case "require", "verify-ca", "verify-full": tls = .require(.makeClientConfiguration())
        case let other:
            throw OIDCError(.invalidArgument, "The database URL's sslmode \(other.prefix(40).debugDescription) is not one of require (the default), verify-ca, verify-full, prefer, allow or disable.")
        }
        // Brackets of an IPv6 literal are URL syntax, not part of the address.
        let bare = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        return PostgresClient.Configuration(
            host: bare, port: components.port ?? 5432, username: user, password: password, database: database, tls: tls)
    }
}
