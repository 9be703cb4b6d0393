/// One name/value pair of an authorization URL, a callback or a form body.
public struct OAuthParameter: Sendable, Hashable {
    /// The parameter's name, such as `client_id`.
    public var name: String
    /// The value, not encoded: encoding happens when a URL or a form body is written.
    public var value: String

    /// A name/value pair.
    public init(_ name: String, _ value: String) {
        self.name = name
        self.value = value
    }
}

/// Looking up a parameter of a decoded query or form body by name.
extension Array where Element == OAuthParameter {
    /// The value of the parameter with this name, if present.
    public subscript(name: String) -> String? {
        first { $0.name == name }?.value
    }
}
