/// A secret string: an access, refresh or ID token, an authorization code, a PKCE verifier, a client
/// secret.
///
/// Printing, interpolating, dumping or mirroring a `Secret` shows `<redacted>`, so secrets cannot
/// leak into logs, error messages or crash output by accident. Reading the value takes the
/// deliberately loud ``revealedValue`` accessor; comparison runs in constant time.
public struct Secret: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible,
    CustomReflectable
{
    private let value: String

    /// Wraps `value`.
    public init(_ value: String) { self.value = value }

    /// The secret itself. Every use should be a place where the secret must leave the process
    /// (an HTTP body, a header, the store) or where the user explicitly asked to see it.
    public var revealedValue: String { value }

    /// `<redacted>`, never the value.
    public var description: String { "<redacted>" }
    /// `Secret(<redacted>)`, never the value.
    public var debugDescription: String { "Secret(<redacted>)" }
    /// A mirror without children, so `dump` and debuggers show nothing of the value.
    public var customMirror: Mirror { Mirror(self, children: [], displayStyle: .struct) }

    /// Whether both hold the same string, compared byte for byte in a time that depends on the
    /// lengths only.
    public static func == (lhs: Secret, rhs: Secret) -> Bool {
        ConstantTime.equals(lhs.value, rhs.value)
    }
}
