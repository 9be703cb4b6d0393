internal import Foundation

#if canImport(Glibc)
internal import Glibc
#elseif canImport(Musl)
internal import Musl
#elseif canImport(Darwin)
internal import Darwin
#endif

/// Which file a path named at one moment: device and inode.
struct FileIdentity: Equatable {
    let device: UInt64
    let inode: UInt64

    init(_ info: stat) {
        device = UInt64(info.st_dev)
        inode = UInt64(info.st_ino)
    }
}

/// The file names of one key.
///
/// Service and account are each percent-encoded byte by byte (UTF-8, after Unicode NFC
/// normalization, so that equal strings give one file) except `a-z 0-9 . _ -`, with upper-case hex
/// digits; upper-case letters are encoded too, so names differ even on a case-insensitive file
/// system. They are joined with `@`, which an encoded part never contains. A name therefore never
/// contains `/`, never is `.` or `..`, and decodes back to exactly one key.
struct FileNames {
    /// `<service>@<account>.json`
    let data: String
    /// `<service>@<account>.json.lock`
    let lock: String
    /// `<service>@<account>.json.reserve`: the space a refresh's answer will take, held before the
    /// refresh is sent (``FileKeychain/reserveSpace(toReplace:for:)``).
    var reservation: String { data + ".reserve" }
    /// The prefix of `<service>@<account>.json.tmp-<random>`, a save's temporary file.
    var temporaryPrefix: String { data + ".tmp-" }

    /// Longest encoded `<service>@<account>`, leaving room for suffixes within 255 bytes.
    static let maximumBaseLength = 200

    init(_ key: TokenStoreKey) throws(OIDCError) {
        let base = Self.encode(key.service) + "@" + Self.encode(key.account)
        guard base.utf8.count <= Self.maximumBaseLength else {
            throw .invalidArgument(
                "The store key's service and account are too long for a file name (\(base.utf8.count) bytes encoded, at most \(Self.maximumBaseLength)).")
        }
        data = base + ".json"
        lock = data + ".lock"
    }

    /// The key whose data file is `name`, or `nil` for any other file.
    static func key(fromDataFile name: String) -> TokenStoreKey? {
        guard name.hasSuffix(".json") else { return nil }
        let parts = name.dropLast(5).split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count == 2, let service = decode(parts[0]), let account = decode(parts[1]) else { return nil }
        return TokenStoreKey(service: service, account: account)
    }

    private static func isLiteral(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
            UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "-"):
            true
        default: false
        }
    }

    private static let hexDigits = Array("0123456789ABCDEF".utf8)

    static func encode(_ text: String) -> String {
        var bytes: [UInt8] = []
        // NFC leaves ASCII as it is; skipping it spares the hot path of `oidc token` Unicode's tables.
        let canonical = text.utf8.allSatisfy { $0 < 0x80 } ? text : text.precomposedStringWithCanonicalMapping
        for byte in canonical.utf8 {
            if isLiteral(byte) {
                bytes.append(byte)
            } else {
                bytes += [UInt8(ascii: "%"), hexDigits[Int(byte >> 4)], hexDigits[Int(byte & 0xF)]]
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The text `encode` turned into `encoded`, or `nil` when `encoded` is not exactly such an output.
    static func decode(_ encoded: Substring) -> String? {
        var bytes: [UInt8] = []
        var iterator = encoded.utf8.makeIterator()
        while let byte = iterator.next() {
            if byte == UInt8(ascii: "%") {
                guard let high = iterator.next().flatMap({ hexDigits.firstIndex(of: $0) }),
                    let low = iterator.next().flatMap({ hexDigits.firstIndex(of: $0) })
                else { return nil }
                bytes.append(UInt8(high << 4 | low))
            } else if isLiteral(byte) {
                bytes.append(byte)
            } else {
                return nil
            }
        }
        guard let text = String(validating: bytes, as: UTF8.self), encode(text) == encoded else { return nil }
        return text
    }
}
