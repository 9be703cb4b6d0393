internal import OIDC

/// The provider's small HTML pages: error pages, the demo sign-in page, the signed-out page.
enum HTML {
    /// Escapes `& < > " '` for text and attribute values.
    static func escape(_ text: String) -> String { HTMLEscaping.escaped(text) }

    /// A complete page; `body` is already HTML.
    static func page(title: String, body: String) -> String {
        """
        <!doctype html>
        <html lang="en"><head><meta charset="utf-8"><title>\(escape(title))</title>
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <style>body{font-family:system-ui,sans-serif;max-width:32rem;margin:4rem auto;padding:0 1rem}
        button{font-size:1rem;padding:.5rem 1.5rem;margin-right:.5rem}</style></head>
        <body>\(body)</body></html>
        """
    }

    /// An error page that explains the problem and redirects nowhere (RFC 6749 §4.1.2.1).
    static func errorPage(_ error: String, _ description: String) -> String {
        page(title: "Error: \(error)", body: "<h1>\(escape(error))</h1><p>\(escape(description))</p>")
    }
}
