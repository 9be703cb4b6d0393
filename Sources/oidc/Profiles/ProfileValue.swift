import OIDC

// How the profile file holds each kind of value a profile remembers (Profile+Settings.swift
// names which setting is which kind): the JSON type, the default left out, the message for a
// member of another type.

/// A member of the profile file.
struct ProfileKey: CodingKey {
    let stringValue: String
    init(_ name: String) { stringValue = name }
    init?(stringValue: String) { self.init(stringValue) }
    var intValue: Int? { nil }
    init?(intValue: Int) { nil }
}

/// A value a profile remembers: how the file holds it, and which value it leaves out.
protocol ProfileValue {
    /// Whether the file leaves the value out (an empty list, `false`, `nil`).
    var isDefault: Bool { get }
    /// The value of `key`; the default when the file has no such member or `null`.
    ///
    /// - Throws: ``ProfileFormatError`` naming the key when the member is of another type.
    static func read(_ key: ProfileKey, from container: KeyedDecodingContainer<ProfileKey>) throws -> Self
    func write(_ key: ProfileKey, to container: inout KeyedEncodingContainer<ProfileKey>) throws
}

/// A value a profile remembers as one JSON value, `nil` when it has none.
protocol ProfileScalar {
    /// The value of `key`; `nil` when the file has no such member or `null`.
    static func readIfPresent(_ key: ProfileKey, from container: KeyedDecodingContainer<ProfileKey>) throws -> Self?
    func write(_ key: ProfileKey, to container: inout KeyedEncodingContainer<ProfileKey>) throws
}

extension Optional: ProfileValue where Wrapped: ProfileScalar {
    var isDefault: Bool { self == nil }

    static func read(_ key: ProfileKey, from container: KeyedDecodingContainer<ProfileKey>) throws -> Wrapped? {
        try Wrapped.readIfPresent(key, from: container)
    }

    func write(_ key: ProfileKey, to container: inout KeyedEncodingContainer<ProfileKey>) throws {
        try self?.write(key, to: &container)
    }
}

extension String: ProfileScalar {
    static func readIfPresent(_ key: ProfileKey, from container: KeyedDecodingContainer<ProfileKey>) throws -> String? {
        do { return try container.decodeIfPresent(String.self, forKey: key) } catch {
            throw ProfileFormatError("'\(key.stringValue)' is not a string")
        }
    }

    func write(_ key: ProfileKey, to container: inout KeyedEncodingContainer<ProfileKey>) throws {
        try container.encode(self, forKey: key)
    }
}

/// A number of seconds (`max_age`).
extension Int: ProfileScalar {
    static func readIfPresent(_ key: ProfileKey, from container: KeyedDecodingContainer<ProfileKey>) throws -> Int? {
        let number: Double?
        do { number = try container.decodeIfPresent(Double.self, forKey: key) } catch { number = .nan }
        guard let number else { return nil }
        guard let whole = Int(exactly: number), whole >= 0 else {
            throw ProfileFormatError("'\(key.stringValue)' is not a whole number of seconds")
        }
        return whole
    }

    func write(_ key: ProfileKey, to container: inout KeyedEncodingContainer<ProfileKey>) throws {
        try container.encode(self, forKey: key)
    }
}

/// One of a few names (`--flow`, `--provider`).
protocol ProfileChoice: ProfileScalar, RawRepresentable, CaseIterable where RawValue == String {}

extension ProfileChoice {
    static func readIfPresent(_ key: ProfileKey, from container: KeyedDecodingContainer<ProfileKey>) throws -> Self? {
        guard let name = try String.readIfPresent(key, from: container) else { return nil }
        guard let choice = Self(rawValue: name) else {
            throw ProfileFormatError("'\(key.stringValue)' is not one of \(allCases.map(\.rawValue).joined(separator: ", "))")
        }
        return choice
    }

    func write(_ key: ProfileKey, to container: inout KeyedEncodingContainer<ProfileKey>) throws {
        try container.encode(rawValue, forKey: key)
    }
}

extension LoginFlowKind: ProfileChoice {}
extension CIBAMode: ProfileChoice {}

/// The provider is always written; a file without it is a generic provider's.
extension Profile.Kind: ProfileChoice, ProfileValue {
    var isDefault: Bool { false }

    static func read(_ key: ProfileKey, from container: KeyedDecodingContainer<ProfileKey>) throws -> Profile.Kind {
        try readIfPresent(key, from: container) ?? .generic
    }
}

/// `true` is written; `false`, the default, is left out.
extension Bool: ProfileValue {
    var isDefault: Bool { !self }

    static func read(_ key: ProfileKey, from container: KeyedDecodingContainer<ProfileKey>) throws -> Bool {
        do { return try container.decodeIfPresent(Bool.self, forKey: key) ?? false } catch {
            throw ProfileFormatError("'\(key.stringValue)' is not true or false")
        }
    }

    func write(_ key: ProfileKey, to container: inout KeyedEncodingContainer<ProfileKey>) throws {
        try container.encode(self, forKey: key)
    }
}

/// An element of a list a profile remembers.
protocol ProfileListElement {
    /// Why a member `key` that is not a list of such elements is refused.
    static func refusal(_ key: ProfileKey) -> ProfileFormatError
    static func read(_ key: ProfileKey, from list: inout UnkeyedDecodingContainer) throws -> Self
    func write(to list: inout UnkeyedEncodingContainer) throws
}

/// A list; an empty one is left out, and a missing or `null` member is an empty list.
extension Array: ProfileValue where Element: ProfileListElement {
    var isDefault: Bool { isEmpty }

    static func read(_ key: ProfileKey, from container: KeyedDecodingContainer<ProfileKey>) throws -> [Element] {
        guard container.contains(key), try !container.decodeNil(forKey: key) else { return [] }
        var list: UnkeyedDecodingContainer
        do { list = try container.nestedUnkeyedContainer(forKey: key) } catch { throw Element.refusal(key) }
        var result: [Element] = []
        while !list.isAtEnd { result.append(try Element.read(key, from: &list)) }
        return result
    }

    func write(_ key: ProfileKey, to container: inout KeyedEncodingContainer<ProfileKey>) throws {
        var list = container.nestedUnkeyedContainer(forKey: key)
        for element in self { try element.write(to: &list) }
    }
}

extension String: ProfileListElement {
    static func refusal(_ key: ProfileKey) -> ProfileFormatError { ProfileFormatError("'\(key.stringValue)' is not a list") }

    static func read(_ key: ProfileKey, from list: inout UnkeyedDecodingContainer) throws -> String {
        do { return try list.decode(String.self) } catch {
            throw ProfileFormatError("'\(key.stringValue)' holds something other than strings")
        }
    }

    func write(to list: inout UnkeyedEncodingContainer) throws { try list.encode(self) }
}

/// A parameter is a `[name, value]` pair.
extension OAuthParameter: ProfileListElement {
    static func refusal(_ key: ProfileKey) -> ProfileFormatError {
        ProfileFormatError("'\(key.stringValue)' must be a list of [name, value] pairs")
    }

    static func read(_ key: ProfileKey, from list: inout UnkeyedDecodingContainer) throws -> OAuthParameter {
        do {
            var pair = try list.nestedUnkeyedContainer()
            let name = try pair.decode(String.self)
            let value = try pair.decode(String.self)
            if pair.isAtEnd { return OAuthParameter(name, value) }
        } catch {}
        throw refusal(key)
    }

    func write(to list: inout UnkeyedEncodingContainer) throws {
        var pair = list.nestedUnkeyedContainer()
        try pair.encode(name)
        try pair.encode(value)
    }
}
