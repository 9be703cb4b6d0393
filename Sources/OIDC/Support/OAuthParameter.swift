/// One name/value pair of an authorization URL, a callback or a form body.
public struct OAuthParameter: Sendable, Hashable {
    public var name: String
    public var value: String

    public init(_ name: String, _ value: String) {
        self.name = name
        self.value = value
    }
}

extension Array where Element == OAuthParameter {
    /// The value of the parameter with this name, if present.
    public subscript(name: String) -> String? {
        first { $0.name == name }?.value
    }
}
