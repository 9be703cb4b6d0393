internal import Foundation

/// Rich authorization requests (RFC 9396): what a client asks for, or was granted, as structured
/// data instead of scope strings: a payment's amount and creditor, an account's actions. A JSON
/// array of objects, each with a string `type` (the API's name for what the object describes) and
/// members the API defines.
///
/// Send it as ``parameter`` (`authorization_details`) on an authorization request (in its
/// ``AuthorizationRequest/additionalParameters``: it goes into a pushed request or a request
/// object as JSON, RFC 9396 §3) or on a token request (``TokenClient/clientCredentials(scopes:parameters:)``);
/// a token response's copy is ``TokenSet/authorizationDetails``.
public struct AuthorizationDetails: Sendable, Equatable, CustomStringConvertible {
    /// The most bytes an `authorization_details` may have as JSON text.
    public static let sizeLimit = 64 * 1024

    /// The objects, each with a string `type`.
    public let elements: [JSONValue]

    /// The details `elements`.
    ///
    /// - Throws: ``OIDCError/Code/invalidArgument`` when the array is empty, an element is not an
    ///   object with a non-empty string `type`, or the JSON text is over ``sizeLimit``.
    public init(_ elements: [JSONValue]) throws(OIDCError) {
        guard !elements.isEmpty else { throw .invalidArgument("authorization_details is an empty array: give at least one object with a type (RFC 9396 §2).") }
        for (index, element) in elements.enumerated() {
            guard let object = element.objectValue else {
                throw .invalidArgument("authorization_details[\(index)] is not a JSON object (RFC 9396 §2).")
            }
            guard let type = object["type"]?.stringValue, !type.isEmpty else {
                throw .invalidArgument("authorization_details[\(index)] has no string type (RFC 9396 §2: every object names its type).")
            }
        }
        self.elements = elements
        guard jsonText.utf8.count <= Self.sizeLimit else {
            throw .invalidArgument("authorization_details is over \(Self.sizeLimit / 1024) KiB as JSON.")
        }
    }

    /// The details in `json`, a JSON array of objects.
    ///
    /// - Throws: ``OIDCError/Code/invalidArgument`` when `json` is over ``sizeLimit``, is not JSON,
    ///   is not an array, or breaks ``init(_:)``'s rules.
    public init(json: String) throws(OIDCError) {
        guard json.utf8.count <= Self.sizeLimit else {
            throw .invalidArgument("authorization_details is over \(Self.sizeLimit / 1024) KiB.")
        }
        let value: JSONValue
        do { value = try StrictJSONParser.parse(Array(json.utf8)) } catch {
            throw .invalidArgument("authorization_details is not valid JSON (\(error)).")
        }
        guard let elements = value.arrayValue else {
            throw .invalidArgument("authorization_details must be a JSON array of objects (RFC 9396 §2).")
        }
        try self.init(elements)
    }

    /// Each element's `type`, in order.
    public var types: [String] { elements.compactMap { $0.objectValue?["type"]?.stringValue } }

    /// The array as compact JSON text (members sorted).
    public var jsonText: String { JSONValue.array(elements).jsonText }

    /// The `authorization_details` parameter of a request.
    public var parameter: OAuthParameter { OAuthParameter("authorization_details", jsonText) }

    /// The types, sanitized: the members may be personal or payment data, and are not shown.
    public var description: String {
        "AuthorizationDetails(types: \(types.map { UntrustedText.sanitized($0, limit: 64) }.joined(separator: ", ")))"
    }
}
