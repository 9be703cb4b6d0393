import Foundation
import OIDC

/// A 403's `WWW-Authenticate: Bearer error="insufficient_scope", scope="…"` (RFC 6750 §3.1; `DPoP`
/// challenges too, RFC 9449 §7.1): the scopes the server says the request needs.
struct InsufficientScopeChallenge: Equatable {
    /// The challenge's `scope`, split on spaces; empty when it names none.
    var scopes: [String]

    /// The challenge of `response`, when it is a 403 with an `insufficient_scope` Bearer or DPoP
    /// challenge; `nil` otherwise. Fields over 8 KiB are not read.
    init?(_ response: HTTPResponse) {
        guard response.status == 403 else { return nil }
        for field in response.headers.values("WWW-Authenticate") where field.utf8.count <= 8 * 1024 {
            for challenge in Self.challenges(field) where ["bearer", "dpop"].contains(challenge.scheme.lowercased()) {
                guard challenge.parameters["error"] == "insufficient_scope" else { continue }
                scopes = (challenge.parameters["scope"] ?? "").split(separator: " ").map(String.init)
                return
            }
        }
        return nil
    }

    /// The scopes to ask for at the step-up login: those already `granted`, then the challenge's,
    /// each once (the MCP authorization spec's union, so that nothing granted is lost).
    func scopes(adding granted: [String]) -> [String] {
        var union: [String] = []
        for scope in granted + scopes where !union.contains(scope) { union.append(scope) }
        return union
    }

    /// The challenges of one `WWW-Authenticate` field (RFC 9110 §11.6.1): a scheme, then
    /// `name=value` or `name="quoted"` parameters, separated by commas; a parameter name that
    /// follows a scheme-like token starts the next challenge. Only what the step-up needs: a token68
    /// (`Basic abc==`) is read as a parameter of its challenge, which no Bearer challenge sees.
    static func challenges(_ field: String) -> [(scheme: String, parameters: [String: String])] {
        var result: [(scheme: String, parameters: [String: String])] = []
        var scanner = Substring(field)
        while true {
            scanner = scanner.drop(while: { $0 == " " || $0 == "," || $0 == "\t" })
            guard !scanner.isEmpty else { break }
            let token = scanner.prefix(while: { !" ,=\t".contains($0) })
            scanner = scanner.dropFirst(token.count)
            if scanner.first == "=", !result.isEmpty {
                // `name=value` of the current challenge.
                scanner = scanner.dropFirst()
                let value: String
                if scanner.first == "\"" {
                    var text = ""
                    var index = scanner.index(after: scanner.startIndex)
                    while index < scanner.endIndex, scanner[index] != "\"" {
                        if scanner[index] == "\\" { index = scanner.index(after: index) }
                        if index < scanner.endIndex { text.append(scanner[index]); index = scanner.index(after: index) }
                    }
                    scanner = index < scanner.endIndex ? scanner[scanner.index(after: index)...] : ""
                    value = text
                } else {
                    let bare = scanner.prefix(while: { $0 != "," && $0 != " " })
                    scanner = scanner.dropFirst(bare.count)
                    value = String(bare)
                }
                let name = token.lowercased()
                if result[result.count - 1].parameters[name] == nil { result[result.count - 1].parameters[name] = value }
            } else if !token.isEmpty {
                result.append((String(token), [:]))
            } else {
                scanner = scanner.dropFirst()
            }
        }
        return result
    }
}
