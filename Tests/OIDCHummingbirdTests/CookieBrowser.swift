import Foundation
import OIDC

/// A client that keeps cookies as a browser does (one host here: every server of a test is on
/// 127.0.0.1, and cookies do not tell ports apart), follows redirects (303 and 302 after a POST
/// become a GET), and records every URL it asked for and every `Set-Cookie` it got.
actor CookieBrowser {
    struct Visit {
        var status: Int
        var headers: OIDC.HTTPHeaders
        var body: String
        var history: [String]
    }

    private(set) var cookies: [String: String] = [:]
    private(set) var setCookies: [String] = []

    func open(_ url: String, followRedirects: Bool = true) async throws -> Visit {
        try await send(HTTPRequest(method: "GET", url: try Self.url(url)), followRedirects: followRedirects)
    }

    func post(_ url: String, form: String, headers extra: OIDC.HTTPHeaders = [:], followRedirects: Bool = true) async throws -> Visit {
        var headers: OIDC.HTTPHeaders = ["Content-Type": "application/x-www-form-urlencoded"]
        for (name, value) in extra { headers.add(name, value) }
        let request = HTTPRequest(method: "POST", url: try Self.url(url), headers: headers, body: Array(form.utf8))
        return try await send(request, followRedirects: followRedirects)
    }

    private func send(_ first: HTTPRequest, followRedirects: Bool) async throws -> Visit {
        var request = first
        var history: [String] = []
        for _ in 0..<12 {
            history.append(request.url.absoluteString)
            var headers = request.headers
            if !cookies.isEmpty { headers.add("Cookie", cookies.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: "; ")) }
            let response = try await NIOHTTPTransport.shared.send(
                HTTPRequest(method: request.method, url: request.url, headers: headers, body: request.body))
            for line in response.headers.values("Set-Cookie") { take(line) }
            let visit = Visit(status: response.status, headers: response.headers, body: String(decoding: response.body, as: UTF8.self), history: history)
            guard followRedirects, (300...399).contains(response.status), let location = response.headers["Location"],
                let next = URL(string: location, relativeTo: request.url)?.absoluteURL
            else { return visit }
            request = [307, 308].contains(response.status) ? HTTPRequest(method: request.method, url: next, headers: request.headers, body: request.body)
                : HTTPRequest(method: "GET", url: next)
        }
        throw OIDCError(.invalidArgument, "Too many redirects: \(history)")
    }

    private func take(_ line: String) {
        setCookies.append(line)
        let pair = line.split(separator: ";", maxSplits: 1)[0]
        guard let equals = pair.firstIndex(of: "=") else { return }
        let name = pair[..<equals].trimmingCharacters(in: .whitespaces)
        let value = String(pair[pair.index(after: equals)...])
        let expired = line.lowercased().contains("max-age=0") || value.isEmpty
        cookies[name] = expired ? nil : value
    }

    static func url(_ text: String) throws -> URL {
        guard let url = URL(string: text) else { throw OIDCError(.invalidArgument, "Not a URL: \(text)") }
        return url
    }
}
