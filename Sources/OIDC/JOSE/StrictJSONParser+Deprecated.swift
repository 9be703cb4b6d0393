/// The library's strict JSON reader (duplicate names, depth, non-finite numbers, invalid UTF-8
/// refused): its own plumbing, public by mistake.
@available(*, deprecated, message: "StrictJSON is internal plumbing and will be removed; use Foundation's JSONSerialization or JSONDecoder, and the typed values the library returns (ProviderMetadata.raw, TokenIntrospection.raw, UnverifiedJWT)")
public enum StrictJSON {
    /// Why a document was refused.
    public struct ParseError: Error, Sendable, Equatable, CustomStringConvertible {
        /// What is wrong, such as `duplicate member name 'aud'` or `number out of range`.
        public let reason: String
        /// Byte offset of the problem.
        public let offset: Int
        /// ``reason`` and ``offset``: `duplicate member name 'aud' at byte 42`.
        public var description: String { "\(reason) at byte \(offset)" }

        init(_ error: StrictJSONParser.ParseError) {
            reason = error.reason
            offset = error.offset
        }
    }

    /// The default nesting bound; JOSE headers and ID-token claims need far less.
    public static let defaultMaximumDepth = StrictJSONParser.defaultMaximumDepth

    /// Parses one JSON text.
    public static func parse(_ bytes: [UInt8], maximumDepth: Int = defaultMaximumDepth) throws(ParseError) -> JSONValue {
        do { return try StrictJSONParser.parse(bytes, maximumDepth: maximumDepth) } catch { throw ParseError(error) }
    }

    /// Parses one JSON text that must be an object.
    public static func parseObject(_ bytes: [UInt8], maximumDepth: Int = defaultMaximumDepth) throws(ParseError) -> [String: JSONValue] {
        do { return try StrictJSONParser.parseObject(bytes, maximumDepth: maximumDepth) } catch { throw ParseError(error) }
    }

    /// Parses one JSON text that must be an object, keeping its members in order: for code
    /// written against this name inside the package.
    package static func parseMembers(_ bytes: [UInt8], maximumDepth: Int = defaultMaximumDepth) throws(ParseError) -> JSONMembers {
        do { return try StrictJSONParser.parseMembers(bytes, maximumDepth: maximumDepth) } catch { throw ParseError(error) }
    }
}
