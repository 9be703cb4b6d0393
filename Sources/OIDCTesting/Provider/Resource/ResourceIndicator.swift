internal import Foundation

/// RFC 8707 §2: a `resource` value is an absolute URI without a fragment.
enum ResourceIndicator {
    static func isValid(_ value: String) -> Bool {
        guard value.utf8.count <= 2048, !value.contains("#"), let components = URLComponents(string: value),
            let scheme = components.scheme, !scheme.isEmpty, components.host?.isEmpty == false
        else { return false }
        return true
    }
}
