/// A value carried alongside a value type's data but not part of it: every two are equal, so a
/// struct's synthesized `==` ignores it (a login's verified ID token, read when the login was made,
/// is not what a store keeps and compares).
struct Unkept<Value: Sendable>: Sendable, Equatable {
    var value: Value?

    init(_ value: Value?) { self.value = value }

    static func == (_: Self, _: Self) -> Bool { true }
}
