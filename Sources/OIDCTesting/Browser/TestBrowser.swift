public import Foundation
public import OIDC

/// A browser for tests and demos: opens a URL, follows redirects and submits sign-in forms the way a
/// person would, over real HTTP, until a page without a form comes back (in a login, the loopback
/// listener's success or failure page).
///
/// It signs in at ``TestProvider``'s login page (``TestProvider/AuthorizeBehaviour/loginPage``) and
/// at simple provider pages such as oidc-provider-mock's, whose text fields it fills from
/// ``formValues``. With ``choice`` set to ``Choice/deny`` it presses the page's Deny or Cancel button.
///
/// ```swift
/// let visit = try await TestBrowser().open(listener.startURL)
/// ```
///
/// For a web app under test (OIDCHummingbird's `WebSignIn`, say), give it a ``CookieJar``: it then
/// keeps the app's cookies from page to page; with ``submitsForms`` off it stops at the first page
/// that is not a redirect (the app's signed-in page, with its sign-out form), and ``post(_:form:)``
/// submits a form of the test's own.
public struct TestBrowser: Sendable {
    /// Which button of a sign-in form to press.
    public enum Choice: String, Sendable, CaseIterable {
        /// The first submit button that is not a Deny or Cancel button.
        case approve
        /// A button whose value or label is Deny or Cancel.
        case deny
    }

    /// The last page the browser saw.
    public struct Visit: Sendable {
        /// The page's URL.
        public var url: URL
        /// The page's status code.
        public var status: Int
        /// The page's header fields.
        public var headers: HTTPHeaders
        /// The page's body, decoded as UTF-8.
        public var body: String
        /// Every URL requested, in order (redirects and form posts included).
        public var history: [URL]
    }

    /// Values for the forms' text fields by name, such as `["sub": "alice@example.com"]`; a field
    /// without one keeps its own `value`.
    public var formValues: [String: String]
    /// Which button to press on sign-in forms; ``Choice/approve`` by default.
    public var choice: Choice
    /// Redirects plus form posts before the browser gives up.
    public var maximumSteps: Int
    /// Called with each redirect's target before the browser follows it: a test can play another
    /// party there (send a forged callback first, say).
    public var beforeRedirect: (@Sendable (URL) async -> Void)?
    /// The cookies kept from page to page; `nil` (the default): none are sent or kept.
    public var cookies: CookieJar?
    /// Whether sign-in forms are submitted (``choice``); `true` by default. Off, the browser
    /// follows redirects only.
    public var submitsForms: Bool
    private let transport: any HTTPTransport

    /// A browser that fills text fields from `formValues` (none by default), approves, gives up
    /// after 20 steps and sends through `NIOHTTPTransport.shared`, unless told otherwise.
    public init(
        formValues: [String: String] = [:], choice: Choice = .approve, maximumSteps: Int = 20,
        cookies: CookieJar? = nil, submitsForms: Bool = true, transport: any HTTPTransport = NIOHTTPTransport.shared
    ) {
        self.cookies = cookies
        self.submitsForms = submitsForms
        self.formValues = formValues
        self.choice = choice
        self.maximumSteps = maximumSteps
        self.transport = transport
    }

    /// Opens `url` and goes on until a page without a form.
    ///
    /// - Throws: an `OIDCError` with code `invalidArgument` after ``maximumSteps`` steps or for a redirect
    ///   without a usable `Location`; the transport's errors.
    public func open(_ url: URL) async throws(OIDCError) -> Visit {
        try await follow(HTTPRequest(method: "GET", url: url, headers: Self.headers))
    }

    /// Posts `form` (URL-encoded, its names in order) to `url` and goes on as ``open(_:)`` does.
    ///
    /// - Throws: what ``open(_:)`` throws.
    public func post(_ url: URL, form: [String: String]) async throws(OIDCError) -> Visit {
        var headers = Self.headers
        headers.set("Content-Type", "application/x-www-form-urlencoded")
        let body = FormURLEncoding.encode(form.sorted { $0.key < $1.key }.map { OAuthParameter($0.key, $0.value) })
        return try await follow(HTTPRequest(method: "POST", url: url, headers: headers, body: Array(body.utf8)))
    }

    private func follow(_ first: HTTPRequest) async throws(OIDCError) -> Visit {
        var request = first
        var history: [URL] = []
        var submitted = Set<String>()
        for _ in 0..<maximumSteps {
            history.append(request.url)
            var sent = request
            if let cookie = cookies?.header(for: request.url) { sent.headers.set("Cookie", cookie) }
            let response = try await transport.send(sent, options: HTTPRequestOptions(timeout: .seconds(30)))
            for field in response.headers.values("Set-Cookie") { cookies?.take(field, from: request.url) }
            let body = String(decoding: response.body, as: UTF8.self)
            if (300...399).contains(response.status) {
                guard let location = response.headers["Location"], let next = URL(string: location, relativeTo: request.url)?.absoluteURL
                else { throw OIDCError(.invalidArgument, "A redirect (\(response.status)) without a usable Location header.") }
                await beforeRedirect?(next)
                // 307 and 308 repeat the method and body; the others become a GET (RFC 9110 §15.4).
                request = [307, 308].contains(response.status)
                    ? HTTPRequest(method: request.method, url: next, headers: request.headers, body: request.body)
                    : HTTPRequest(method: "GET", url: next, headers: Self.headers)
                continue
            }
            let forms = HTMLForm.forms(in: body)
            // A page whose form was already sent once is an answer, not a question (an error page).
            guard submitsForms, response.status == 200, let submission = choose(from: forms, on: request.url),
                submitted.insert(submission.key).inserted
            else {
                return Visit(url: request.url, status: response.status, headers: response.headers, body: body, history: history)
            }
            var headers = Self.headers
            headers.set("Content-Type", "application/x-www-form-urlencoded")
            request = HTTPRequest(method: "POST", url: submission.action, headers: headers, body: Array(submission.body.utf8))
        }
        throw OIDCError(.invalidArgument, "The browser gave up after \(maximumSteps) redirects and forms.")
    }

    private static var headers: HTTPHeaders { ["Accept": "text/html,application/xhtml+xml", "User-Agent": "swift-oidc TestBrowser"] }

    private struct Submission {
        var action: URL
        var body: String
        var key: String
    }

    private func choose(from forms: [HTMLForm], on page: URL) -> Submission? {
        for form in forms where form.method == "post" {
            let buttons = form.buttons
            let button: HTMLForm.Field?
            switch choice {
            case .approve: button = buttons.first { !$0.isDenial }
            case .deny: button = buttons.first(where: \.isDenial)
            }
            guard let button else { continue }
            var fields: [OAuthParameter] = form.inputs.compactMap { input in
                guard let name = input.name else { return nil }
                return OAuthParameter(name, formValues[name] ?? input.value ?? "")
            }
            if let name = button.name { fields.append(OAuthParameter(name, button.value ?? "")) }
            // No action (or an empty one) posts to the page itself, query included.
            let action = form.action.flatMap { $0.isEmpty ? nil : URL(string: $0, relativeTo: page)?.absoluteURL } ?? page
            let body = FormURLEncoding.encode(fields)
            return Submission(action: action, body: body, key: action.absoluteString + "|" + fields.map(\.name).joined(separator: ","))
        }
        return nil
    }
}
