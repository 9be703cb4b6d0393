internal import Foundation

/// A request target as the loopback listener reads it (RFC 9112 §3.2): the origin form
/// (`/callback?code=…`) as it is, and the absolute form (`http://127.0.0.1:PORT/callback?code=…`,
/// which a server must accept) cut to its path and query, so that both name the same resource and
/// neither is logged with more than its path.
struct LoopbackRequestTarget {
    /// The authority of an absolute-form target (`127.0.0.1:8000`), lowercased; `nil` in origin form.
    let authority: String?
    /// The path and the query, from the first `/`: `/callback?code=…`.
    let pathAndQuery: String

    init(_ target: String) {
        let scheme = "http://"
        guard target.utf8.count > scheme.utf8.count, target.prefix(scheme.count).lowercased() == scheme else {
            authority = nil
            pathAndQuery = target
            return
        }
        let rest = target.dropFirst(scheme.count)
        let end = rest.firstIndex { $0 == "/" || $0 == "?" } ?? rest.endIndex
        authority = rest[..<end].lowercased()
        let remainder = rest[end...]
        // `http://host:port?x` names the path `/` (RFC 9110 §4.2.3).
        pathAndQuery = remainder.hasPrefix("/") ? String(remainder) : "/" + remainder
    }

    /// The path, without the query.
    var path: Substring {
        pathAndQuery.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
    }

    /// The query after the first `?`; empty when there is none.
    var query: Substring {
        pathAndQuery.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).dropFirst().first ?? ""
    }

    /// The path for a log line: `<start>` for the start path, every occurrence of the start path's
    /// random part replaced by `<start>` elsewhere (before anything is cut), then sanitized and cut to
    /// 64 characters; never the query or an absolute form's authority.
    func loggablePath(startPath: String) -> String {
        let path = String(self.path)
        if path == startPath { return "<start>" }
        let secret = String(startPath.dropFirst())
        let redacted = secret.isEmpty ? path : path.replacingOccurrences(of: secret, with: "<start>")
        return UntrustedText.sanitized(redacted, limit: 64)
    }
}
