internal import Foundation

/// The forms of an HTML page, read the simple way a test browser needs: `<form>` with its `method`
/// and `action`, its `<input>` fields and its submit buttons. Not a general HTML parser: no scripts,
/// no nested forms, no `<select>` or `<textarea>`.
struct HTMLForm {
    struct Field {
        var attributes: [String: String]
        /// A `<button>`'s text, for buttons without a value.
        var label: String?
        var name: String? { attributes["name"] }
        var value: String? { attributes["value"] }
        var type: String { (attributes["type"] ?? "").lowercased() }

        var isDenial: Bool {
            let words = [value, label].compactMap { $0?.lowercased().trimmingCharacters(in: .whitespacesAndNewlines) }
            return words.contains { ["deny", "cancel", "decline", "reject"].contains($0) }
        }
    }

    var method: String
    var action: String?
    /// Fields that are sent: hidden, text, email, password and the like (not buttons, not unchecked boxes).
    var inputs: [Field]
    /// `<button>` (type submit by default) and `<input type=submit>`.
    var buttons: [Field]

    static func forms(in html: String) -> [HTMLForm] {
        var forms: [HTMLForm] = []
        var current: HTMLForm?
        var openButton: Field?
        var buttonText = ""
        var scanner = Substring(html)
        while let open = scanner.firstIndex(of: "<") {
            if openButton != nil { buttonText += scanner[..<open] }
            guard let close = scanner[open...].firstIndex(of: ">") else { break }
            let tag = scanner[scanner.index(after: open)..<close]
            scanner = scanner[scanner.index(after: close)...]
            let (name, attributes) = parseTag(tag)
            switch name {
            case "form":
                if let form = current { forms.append(form) }
                current = HTMLForm(method: (attributes["method"] ?? "get").lowercased(), action: attributes["action"], inputs: [], buttons: [])
            case "/form":
                if let form = current { forms.append(form) }
                current = nil
            case "input":
                let field = Field(attributes: attributes)
                switch field.type {
                case "submit": current?.buttons.append(field)
                case "button", "reset", "image", "file": break
                case "checkbox", "radio": if attributes["checked"] != nil { current?.inputs.append(field) }
                default: current?.inputs.append(field)
                }
            case "button":
                let type = (attributes["type"] ?? "submit").lowercased()
                if type == "submit" { openButton = Field(attributes: attributes) }
                buttonText = ""
            case "/button":
                if var button = openButton {
                    button.label = decodeEntities(buttonText)
                    current?.buttons.append(button)
                }
                openButton = nil
            default:
                break
            }
        }
        if let form = current { forms.append(form) }
        return forms
    }

    /// `name attr="v" attr='v' attr=v flag` → the lower-cased name and the attributes.
    private static func parseTag(_ tag: Substring) -> (String, [String: String]) {
        var rest = tag.drop(while: \.isWhitespace)
        let closing = rest.first == "/"
        if closing { rest = rest.dropFirst() }
        let bare = rest.prefix { !$0.isWhitespace && $0 != "/" }
        rest = rest.dropFirst(bare.count)
        let name = (closing ? "/" : "") + bare.lowercased()
        var attributes: [String: String] = [:]
        while true {
            rest = rest.drop { $0.isWhitespace || $0 == "/" }
            guard !rest.isEmpty else { break }
            let key = String(rest.prefix { !$0.isWhitespace && $0 != "=" && $0 != "/" }).lowercased()
            guard !key.isEmpty else { break }
            rest = rest.dropFirst(key.count).drop(while: \.isWhitespace)
            guard rest.first == "=" else {
                attributes[key] = attributes[key] ?? ""
                continue
            }
            rest = rest.dropFirst().drop(while: \.isWhitespace)
            let value: Substring
            if let quote = rest.first, quote == "\"" || quote == "'" {
                let body = rest.dropFirst()
                let end = body.firstIndex(of: quote) ?? body.endIndex
                value = body[..<end]
                rest = end == body.endIndex ? body[end...] : body[body.index(after: end)...]
            } else {
                value = rest.prefix { !$0.isWhitespace }
                rest = rest.dropFirst(value.count)
            }
            if attributes[key] == nil { attributes[key] = decodeEntities(value) }
        }
        return (name, attributes)
    }

    private static let entities: [String: String] = ["amp": "&", "lt": "<", "gt": ">", "quot": "\"", "apos": "'", "#39": "'", "#x27": "'", "#34": "\"", "#x2F": "/", "#47": "/"]

    static func decodeEntities<S: StringProtocol>(_ text: S) -> String {
        var result = ""
        var rest = Substring(text)
        while let amp = rest.firstIndex(of: "&") {
            result += rest[..<amp]
            let after = rest[rest.index(after: amp)...]
            if let semicolon = after.prefix(8).firstIndex(of: ";"), let replacement = entities[String(after[..<semicolon])] {
                result += replacement
                rest = after[after.index(after: semicolon)...]
            } else {
                result += "&"
                rest = after
            }
        }
        return result + rest
    }
}
