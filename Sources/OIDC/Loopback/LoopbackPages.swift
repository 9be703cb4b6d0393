/// One answer of the loopback listener: status, header fields (without `Content-Length` and
/// `Connection`, which the connection adds) and body.
struct LoopbackResponse: Sendable {
    var status: Int
    var headers: [(name: String, value: String)]
    var body: [UInt8]
}

/// The pages the loopback listener shows in the user's browser. Each is small (under 2 KB), is
/// never cached or sniffed, runs no script (a `default-src 'none'` policy), sends no referrer, and
/// escapes what it shows. None contains the code, the state or any part of a request's query: the
/// only untrusted text ever shown is a provider's `error` and `error_description`, sanitized, bounded
/// and escaped.
enum LoopbackPage {
    /// Sent with every page (and the redirect).
    static let securityHeaders: [(name: String, value: String)] = [
        ("Cache-Control", "no-store"),
        ("Pragma", "no-cache"),
        ("Referrer-Policy", "no-referrer"),
        ("X-Content-Type-Options", "nosniff"),
        ("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'"),
    ]

    static func success() -> LoopbackResponse {
        page(200, title: "Signed in", paragraphs: ["You are signed in. You can close this window and return to the terminal."])
    }

    /// The first valid callback failed: the provider's own error when it sent one, a generic text otherwise.
    static func failure(_ error: OIDCError) -> LoopbackResponse {
        var paragraphs: [String] = []
        if let provider = error.providerError {
            paragraphs.append("The provider did not sign you in: <code>\(escaped(provider.error))</code>")
            if let description = provider.errorDescription, !description.isEmpty {
                paragraphs.append(escaped(description))
            }
        } else {
            paragraphs.append("The sign-in response could not be used: it was incomplete or did not match the login in progress.")
        }
        paragraphs.append("Return to the terminal for details, and run the login again.")
        return page(400, title: "Sign-in failed", escapedParagraphs: paragraphs)
    }

    /// A signed callback (JARM) that failed its verification: ignored, the login still waits.
    static func refused(_ error: OIDCError) -> LoopbackResponse {
        page(
            400, title: "Sign-in response refused",
            escapedParagraphs: [
                "The signed sign-in response could not be verified (<code>\(escaped(error.code.description))</code>), so it was not used.",
                "The login keeps waiting until its time limit; return to the terminal for details.",
            ]
        )
    }

    /// A callback with a missing, repeated or wrong state, or an unreadable query: ignored.
    static func foreign() -> LoopbackResponse {
        page(
            400, title: "Sign-in response ignored",
            paragraphs: [
                "This sign-in response does not belong to the login in progress; it was ignored. Finish the sign-in in the window you started it from."
            ]
        )
    }

    static func notFound() -> LoopbackResponse {
        page(404, title: "Not found", paragraphs: ["There is nothing here. Finish the sign-in in the window you started it from."])
    }

    static func methodNotAllowed(allow: String = "GET, HEAD") -> LoopbackResponse {
        var response = page(405, title: "Method not allowed", paragraphs: ["Only \(allow == "GET" ? "GET is" : "GET and HEAD are") served here."])
        response.headers.append(("Allow", allow))
        return response
    }

    /// A `Host` that is not one of the listener's addresses (DNS rebinding) or a malformed request.
    static func badRequest() -> LoopbackResponse {
        page(400, title: "Bad request", paragraphs: ["This request was not accepted by the sign-in listener."])
    }

    static func uriTooLong() -> LoopbackResponse {
        page(414, title: "URI too long", paragraphs: ["The request is too long for the sign-in listener."])
    }

    static func versionNotSupported() -> LoopbackResponse {
        page(505, title: "HTTP version not supported", paragraphs: ["Only HTTP/1.1 is served here."])
    }

    /// No login is waiting: not started yet, or already over.
    static func notWaiting() -> LoopbackResponse {
        page(503, title: "No sign-in in progress", paragraphs: ["No login is waiting here right now. Start the login from the terminal."])
    }

    /// The start URL requested a second time while the login waited or held its callback: the login
    /// is aborted (``OIDCError/Code/startURLReused``), and the page says why and what to do.
    static func aborted() -> LoopbackResponse {
        page(409, title: "Sign-in aborted", paragraphs: [
            "This sign-in link was opened more than once, so the login was aborted and nothing was stored.",
            "Another program on this computer may have opened the link first, to sign you in to its own account. Return to the terminal and run the login again.",
            "If you opened the link twice yourself (Back, Reload, or a second browser), that is what stopped it: run the login again.",
        ])
    }

    /// The start URL: on to the authorization endpoint, so the URL the user sees stays short.
    static func redirect(to location: String) -> LoopbackResponse {
        LoopbackResponse(status: 302, headers: [("Location", location)] + securityHeaders, body: [])
    }

    // MARK: Building

    /// At most this many characters of a provider's text are shown, and at most this many bytes once
    /// escaped, so that a page stays under 2 KB.
    static let shownCharacters = 200
    static let shownBytes = 480

    private static func page(_ status: Int, title: String, paragraphs: [String]) -> LoopbackResponse {
        page(status, title: title, escapedParagraphs: paragraphs.map { escaped($0, characters: .max, bytes: .max) })
    }

    private static func page(_ status: Int, title: String, escapedParagraphs: [String]) -> LoopbackResponse {
        let title = escaped(title, characters: .max, bytes: .max)
        let html = """
            <!DOCTYPE html>
            <html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">\
            <title>\(title)</title><style>body{font-family:system-ui,sans-serif;max-width:36em;margin:4em auto;padding:0 1em;\
            line-height:1.5;color:#222}h1{font-size:1.4em}code{overflow-wrap:anywhere}</style></head>
            <body><h1>\(title)</h1>
            \(escapedParagraphs.map { "<p>\($0)</p>" }.joined(separator: "\n"))
            </body></html>

            """
        return LoopbackResponse(
            status: status, headers: [("Content-Type", "text/html; charset=utf-8")] + securityHeaders, body: Array(html.utf8)
        )
    }

    /// HTML-escapes `& < > " '`, replaces control and format characters (bidirectional overrides
    /// included) with `?`, and stops after `characters` characters or `bytes` escaped bytes, adding `…`.
    static func escaped(_ text: String, characters: Int = shownCharacters, bytes: Int = shownBytes) -> String {
        var result = ""
        var count = 0
        var size = 0
        for scalar in text.unicodeScalars {
            let piece: String
            switch scalar {
            case "&": piece = "&amp;"
            case "<": piece = "&lt;"
            case ">": piece = "&gt;"
            case "\"": piece = "&quot;"
            case "'": piece = "&#39;"
            default:
                let category = scalar.properties.generalCategory
                let hidden = category == .control || category == .format || category == .lineSeparator
                    || category == .paragraphSeparator || category == .surrogate || category == .unassigned
                piece = hidden ? "?" : String(scalar)
            }
            guard count < characters, size + piece.utf8.count <= bytes else {
                return result + "…"
            }
            result += piece
            count += 1
            size += piece.utf8.count
        }
        return result
    }
}
