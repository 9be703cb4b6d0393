internal import Foundation
public import OIDC
public import PostgresNIO

/// Reads a libpq-style connection URL, as deployments pass in `DATABASE_URL`, into a
/// `PostgresClient.Configuration`.
///
/// `postgres://USER:PASSWORD@HOST:PORT/DATABASE?sslmode=MODE` (`postgresql://` too): user and
/// password are percent-decoded; the port defaults to 5432 and the database to the user's name;
/// `sslmode` is `disable`, `prefer` (the default) or `require`, and `verify-full` is taken as
/// `require` (PostgresNIO verifies the certificate and the host name in both). A host that starts
/// with `/` in `host=` (`postgres:///db?host=/var/run/postgresql`) is a Unix socket directory.
public enum PostgresConnectionURL {
    /// The client configuration `url` describes.
    ///
    /// - Throws: `OIDCError.Code.invalidArgument` saying what is wrong, without the password.
    public static func configuration(from url: String) throws(OIDCError) -> PostgresClient.Configuration {
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
        switch query["sslmode"] ?? "prefer" {
        case "disable": tls = .disable
        case "prefer", "allow": tls = .prefer(.makeClientConfiguration())
        case "require", "verify-ca", "verify-full": tls = .require(.makeClientConfiguration())
        case let other:
            throw OIDCError(.invalidArgument, "The database URL's sslmode \(other.prefix(40).debugDescription) is not disable, prefer, require or verify-full.")
        }
        // Brackets of an IPv6 literal are URL syntax, not part of the address.
        let bare = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        return PostgresClient.Configuration(
            host: bare, port: components.port ?? 5432, username: user, password: password, database: database, tls: tls)
    }
}
