extension TokenEncryption {
    /// The ids of every key of the ring, the current one first.
    @available(*, deprecated, message: "use [current.id] + previous.map(\\.id) of the keys you gave TokenEncryption(current:previous:)")
    public var keyIDs: [String] { ringKeyIDs }
}
