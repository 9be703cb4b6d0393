import ArgumentParser
import Foundation
import OIDC

/// `oidc request URL`: an API call with the profile's bearer token, through `AuthenticatedSession`.
struct Request: AsyncParsableCommand, LoggingCommand {
    static let configuration = CommandConfiguration(
        abstract: "Call an API with the stored login's access token (refreshed once on a 401, then retried once).",
        discussion: """
            The response body goes to stdout, the status line to stderr. The token goes only to \
            the issuer's host (on its port), the profile's allowed hosts (oidc login --allow-host) \
            and this command's --allow-host (.example.com: with subdomains); https only, plain http \
            only to loopback; redirects are not followed. \
            Exit codes: 0 for 2xx; 4 for 3xx/4xx, for a 401 that a fresh token does not cure, and \
            when the refresh is rejected (the profile is then logged out); 5 for 5xx, 429 and an \
            unreachable server; 6 for a host the token may not go to (nothing is sent).
            """
    )

    @OptionGroup var logging: LoggingOptions

    @OptionGroup var storeOptions: StoreOptions

    @Argument(help: "The URL to call.")
    var url: String

    @Option(name: [.customShort("X"), .customLong("request")], help: "The method (default: GET, or POST with --data).")
    var method: String?

    @Option(name: [.customShort("H"), .customLong("header")], help: "A header as 'Name: value'; repeat for several.")
    var headers: [String] = []

    @Option(name: [.customShort("d"), .customLong("data")], help: "The request body: text, @FILE, or @- for standard input (Content-Type defaults to application/x-www-form-urlencoded, as with curl).")
    var data: String?

    @OptionGroup var credentials: StoredLoginCredentials

    @OptionGroup var tls: TLSOptions

    @Option(help: "Also allow the token to go to this host for this call (.example.com: with its subdomains); repeat for several.")
    var allowHost: [String] = []

    @Option(help: "Seconds to wait for each server (the API, and the provider for a refresh; default: $OIDC_HTTP_TIMEOUT, else 30).")
    var timeout: Int?

    @Flag(name: [.customShort("i"), .customLong("include")], help: "Print the response's status line and header fields on stdout before the body, as curl -i does (an MCP server's mcp-session-id, say).")
    var include = false

    static let maximumBodySize = 16 << 20

    func validate() throws {
        guard let target = URL(string: url), let scheme = target.scheme?.lowercased(), ["http", "https"].contains(scheme), target.host != nil else {
            throw ValidationError("URL must be an absolute http(s) URL, not '\(UntrustedText.sanitized(url))'")
        }
        if let method, method.isEmpty || !method.utf8.allSatisfy({ (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0) || $0 == 0x2D }) {
            throw ValidationError("-X: '\(UntrustedText.sanitized(method))' is not an HTTP method")
        }
        _ = try NetworkTimeout.seconds(flag: timeout, default: 30)
        try AllowedHosts.validate(allowHost)
        _ = try parsedHeaders()
    }

    func parsedHeaders() throws -> HTTPHeaders {
        var result = HTTPHeaders()
        for header in headers {
            guard let colon = header.firstIndex(of: ":"), colon != header.startIndex else {
                throw ValidationError("-H needs 'Name: value', got '\(UntrustedText.sanitized(header))'")
            }
            let name = header[..<colon].trimmingCharacters(in: .whitespaces)
            let value = header[header.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            guard name.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: ":") }), !value.utf8.contains(where: { $0 == 0x0A || $0 == 0x0D }) else {
                throw ValidationError("-H: '\(UntrustedText.sanitized(name))' is not a valid header")
            }
            guard name.lowercased() != "authorization" else {
                throw ValidationError("-H: Authorization is set by oidc from the stored login; do not give it")
            }
            result.add(name, value)
        }
        return result
    }

    func run() async throws {
        guard let target = URL(string: url) else { throw ValidationError("URL is not a URL") }
        var headers = try parsedHeaders()
        let body = try readBody()
        if body != nil, headers["Content-Type"] == nil { headers.set("Content-Type", "application/x-www-form-urlencoded") }
        let request = HTTPRequest(method: (method ?? (body == nil ? "GET" : "POST")).uppercased(), url: target, headers: headers, body: body ?? [])
        let stored = try ProfileLogin.load(storeOptions)
        let allowlist = try AllowedHosts.allowlist(
            for: target, profile: stored.profile, extra: allowHost, issuer: stored.login.issuer, resource: stored.login.resource,
            profileName: storeOptions.profileName
        )
        let outcome: (HTTPResponse, OIDCError?)
        do { outcome = try await send(request, stored: stored, allowlist: allowlist) } catch let error as OIDCError where error.code == .insufficientScope {
            // The session's word for a 403 insufficient_scope (RFC 6750 §3.1): no refresh, no retry.
            Console.error("HTTP 403")
            throw StepUp(profile: storeOptions.profileName, login: stored, url: target, asked: error.requiredScopes, reason: error.context["error_description"]).error
        } catch let error as OIDCError where error.code == .insufficientUserAuthentication {
            // A 401 insufficient_user_authentication (RFC 9470): a new login, not a refresh.
            Console.error("HTTP 401")
            throw AuthenticationStepUp(profile: storeOptions.profileName, url: target, acrValues: error.requiredACRValues, maxAge: error.requiredMaxAge).error
        } catch let error as OIDCError where error.code == .unauthorized {
            // A 401 that a freshly refreshed token did not cure: the resource's reason is in the
            // message; where it names its metadata, the login that gets a token for it follows.
            Console.error("HTTP 401")
            guard let hint = ResourceRefusal.loginHint(for: error, profile: storeOptions.profileName, login: stored, url: target) else { throw error }
            Console.error("oidc: error: \(error.description)")
            Console.error(hint)
            throw ExitCode(ExitCodes.code(for: error.category))
        }
        let (response, problem) = outcome
        Console.error("HTTP \(response.status)")
        if include { Console.outputBytes(Array(Self.head(of: response).utf8)) }
        Console.outputBytes(response.body)
        if let problem { Console.error("oidc: warning: the refreshed tokens could not be stored: \(problem.description)") }
        if let stepUp = StepUp(response, profile: storeOptions.profileName, login: stored, url: target) { throw stepUp.error }
        if let reason = ResourceRefusal.reason(of: response, from: target) { Console.error("oidc: \(reason)") }
        switch response.status {
        case 200...299: return
        case 429, 500...599: throw ExitCode(ExitCodes.temporarilyUnavailable)
        default: throw ExitCode(ExitCodes.authenticationFailed)
        }
    }

    /// Sends `request` through the session of `stored`: the response, and why the refreshed tokens
    /// could not be stored when that happened.
    private func send(_ request: HTTPRequest, stored: ProfileLogin, allowlist: HostAllowlist) async throws -> (HTTPResponse, OIDCError?) {
        let timeout = try NetworkTimeout.seconds(flag: timeout, default: 30)
        var configuration = try tls.transportConfiguration(over: stored.boundProfile)
        configuration.maximumRequestTimeout = .seconds(timeout)
        return try await withNIOHTTPTransport(configuration: configuration, logger: CLILog.logger(.transport)) { transport in
            let session = try stored.session(
                transport: transport, clientSecretFile: credentials.clientSecretFile, allowlist: allowlist,
                options: AuthenticatedSession.Options(
                    requestOptions: HTTPRequestOptions(timeout: .seconds(timeout), maximumResponseSize: Self.maximumBodySize)
                )
            )
            // The servers' DPoP nonces that earlier commands were given: the first proof carries
            // the latest one, and what this request learns is kept for the next (and oidc proof).
            RememberedNonces.seed(session.dpopNonces, with: RememberedNonces.read(stored.login))
            let sent: Result<HTTPResponse, any Error>
            do { sent = .success(try await session.send(request)) } catch { sent = .failure(error) }
            do {
                try await RememberedNonces.keep(
                    session.dpopNonces, for: stored.login.dpopThumbprint, in: stored.keychain, as: storeOptions.key)
            } catch {
                Console.error("oidc: warning: the servers' DPoP nonces could not be kept with the login: \((error as? OIDCError)?.message ?? "\(error)")")
            }
            return (try sent.get(), await session.storageProblem)
        }
    }

    /// `HTTP/1.1 STATUS`, then each header field as `Name: value`, each line ending in CRLF, and an
    /// empty line: curl -i's form. A control character a server put in a value shows as `?`.
    static func head(of response: HTTPResponse) -> String {
        var lines = ["HTTP/1.1 \(response.status)"]
        for (name, value) in response.headers {
            lines.append("\(UntrustedText.sanitized(name, limit: 256)): \(UntrustedText.sanitized(value, limit: 8192))")
        }
        return lines.joined(separator: "\r\n") + "\r\n\r\n"
    }

    private func readBody() throws -> [UInt8]? {
        guard let data else { return nil }
        guard data.hasPrefix("@") else { return Array(data.utf8) }
        let path = String(data.dropFirst())
        let contents = path == "-"
            ? FileHandle.standardInput.readData(ofLength: Self.maximumBodySize + 1)
            : FileManager.default.contents(atPath: path)
        guard let contents else { throw ValidationError("--data: cannot read '\(path)'") }
        guard contents.count <= Self.maximumBodySize else { throw ValidationError("--data: '\(path)' is over 16 MiB") }
        return Array(contents)
    }
}
