import OIDC

/// JSON text made safe for a terminal without changing what it says (review 3, L3): a character
/// that could drive a terminal or hide part of a line (`UntrustedText.isUnsafe`: C0 and C1
/// controls, DEL, format characters such as bidi overrides, line and paragraph separators) is
/// written as its `\uXXXX` escape. A JSON reader gets the same values; a terminal sees only ASCII
/// for those characters. Provider text, such as a granted scope holding `ESC ] 0 ;`, then reaches
/// `oidc token --output json` exactly as the provider sent it, and the screen not at all.
///
/// JSON writers put control characters only inside strings, escaped, except the whitespace between
/// tokens (tab, line feed, carriage return): those are kept, everything else unsafe is escaped,
/// inside strings or not (outside, it was no valid JSON anyway).
enum JSONOutput {
    static func safe(_ json: String) -> String {
        guard json.unicodeScalars.contains(where: needsEscape) else { return json }
        var result = String.UnicodeScalarView()
        for scalar in json.unicodeScalars {
            guard needsEscape(scalar) else {
                result.append(scalar)
                continue
            }
            for unit in String(scalar).utf16 {  // a scalar beyond U+FFFF as its surrogate pair
                let hex = String(unit, radix: 16)
                result.append(contentsOf: ("\\u" + String(repeating: "0", count: 4 - hex.count) + hex).unicodeScalars)
            }
        }
        return String(result)
    }

    private static func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
        scalar != "\n" && scalar != "\r" && scalar != "\t" && UntrustedText.isUnsafe(scalar)
    }
}
