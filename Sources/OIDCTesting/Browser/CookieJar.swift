public import Foundation
import Synchronization

/// The cookies a ``TestBrowser`` keeps between pages, as a browser does for a web app under test:
/// by host (not port: cookies do not tell ports apart), each `Set-Cookie` replacing the cookie of
/// its name, one with `Max-Age=0` or an empty value removing it.
///
/// A test jar, not a browser's: paths, domains, `Expires`, `Secure` and `SameSite` are not
/// applied (every cookie of a host is sent to every page of it, from any site), and a cookie set
/// to an empty value is removed where a browser would keep it empty. A test of what `SameSite`
/// does needs a real browser.
///
/// ```swift
/// let browser = TestBrowser(cookies: CookieJar(), submitsForms: false)
/// let page = try await browser.open(URL(string: app + "/")!)   // the app's sign-in, and back
/// ```
public final class CookieJar: Sendable {
    private let jar = Mutex<[String: [String: String]]>([:])

    /// An empty jar.
    public init() {}

    /// The names of the cookies kept for `host`.
    public func names(for host: String) -> Set<String> { jar.withLock { Set(($0[host] ?? [:]).keys) } }

    /// The value of the cookie `name` kept for `host`.
    public func value(_ name: String, for host: String) -> String? { jar.withLock { $0[host]?[name] } }

    /// The `Cookie` field for a request to `url`, or `nil` when no cookie is kept for its host.
    func header(for url: URL) -> String? {
        guard let host = url.host, let cookies = jar.withLock({ $0[host] }), !cookies.isEmpty else { return nil }
        return cookies.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: "; ")
    }

    /// Keeps the cookie of a `Set-Cookie` field of a response from `url`.
    func take(_ field: String, from url: URL) {
        guard let host = url.host else { return }
        let attributes = field.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
        guard let pair = attributes.first, let equals = pair.firstIndex(of: "=") else { return }
        let name = String(pair[..<equals])
        let value = String(pair[pair.index(after: equals)...])
        let removed = value.isEmpty || attributes.dropFirst().contains { $0.lowercased() == "max-age=0" }
        jar.withLock { $0[host, default: [:]][name] = removed ? nil : value }
    }
}
