/// Text for an HTML page: `& < > " '` escaped, so it is safe in an element's text and in a quoted
/// attribute value. For the package's small pages: OIDCTesting's provider, OIDCHummingbird's web
/// sign-in (the loopback listener's pages also hide control characters and cut long text:
/// `LoopbackPages.escaped`).
package enum HTMLEscaping {
    package static func escaped(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for character in text {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.append(character)
            }
        }
        return out
    }
}
