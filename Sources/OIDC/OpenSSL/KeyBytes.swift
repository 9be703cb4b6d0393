internal import COpenSSL

/// Symmetric key material in memory of its own: a copy of the bytes, never moved by the Swift runtime, wiped
/// (`OPENSSL_cleanse`) when the last reference goes away.
///
/// Prints, dumps and mirrors as `<redacted>`. Reading the bytes takes ``withUnsafeBytes(_:)``,
/// which hands out a pointer valid only inside the closure.
package final class KeyBytes: @unchecked Sendable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    // Immutable after init; freed and wiped only in deinit, so sharing across threads is safe.
    private let storage: UnsafeMutableRawBufferPointer

    /// A private copy of `bytes`; wipe the caller's copy with ``LibCrypto/cleanse(_:)`` when done.
    package init(copying bytes: [UInt8]) {
        let storage = UnsafeMutableRawBufferPointer.allocate(byteCount: max(bytes.count, 1), alignment: 16)
        storage.initializeMemory(as: UInt8.self, repeating: 0)
        bytes.withUnsafeBytes { source in
            if let base = source.baseAddress, let target = storage.baseAddress { target.copyMemory(from: base, byteCount: source.count) }
        }
        self.storage = storage
        count = bytes.count
    }

    deinit {
        OPENSSL_cleanse(storage.baseAddress, storage.count)
        storage.deallocate()
    }

    /// How many bytes.
    package let count: Int

    /// Runs `body` with the bytes; the pointer must not escape it.
    package func withUnsafeBytes<T, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> T) throws(E) -> T {
        try body(UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(storage)[0..<count]))
    }

    /// `<redacted>`, never the bytes.
    package var description: String { "<redacted>" }
    /// `KeyBytes(<redacted>)`, never the bytes.
    package var debugDescription: String { "KeyBytes(<redacted>)" }
    /// A mirror without children, so `dump` shows nothing of the bytes.
    package var customMirror: Mirror { Mirror(self, children: [], displayStyle: .class) }
}
