import CQREncode
import OIDC
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A QR code, encoded by libqrencode 4 (Debian's `libqrencode4`), for `oidc login --qr`: a phone
/// scans the device login's `verification_uri_complete` off the terminal.
///
/// libqrencode is loaded with `dlopen` when a code is first asked for, never linked: `oidc token`
/// must start in a few milliseconds, and a machine without the library runs every other command.
/// The declarations come from `<qrencode.h>`.
struct QRCode: Equatable {
    /// Modules per side.
    let width: Int
    /// Row after row, `true` for a dark module.
    let modules: [Bool]

    /// The modules of `text` at error correction level M (15 %; a screen does not smudge), the
    /// smallest version that holds it, bytes encoded as they are (a URL's case is kept).
    ///
    /// - Throws: ``OIDCError/Code/invalidArgument`` when libqrencode cannot be loaded (naming the
    ///   package to install) or cannot encode `text`.
    init(encoding text: String) throws(OIDCError) {
        let library = try QREncodeLibrary.shared.get()
        guard let code = text.withCString({ library.encodeString($0, 0, QR_ECLEVEL_M, QR_MODE_8, 1) }) else {
            throw OIDCError(.invalidArgument, "--qr: libqrencode could not encode the verification URI (\(text.utf8.count) bytes) as a QR code.")
        }
        defer { library.free(code) }
        let width = Int(code.pointee.width)
        // Bit 0 of each byte is the module's colour (1: dark); the other bits are libqrencode's own.
        let data = UnsafeBufferPointer(start: code.pointee.data, count: width * width)
        self.width = width
        self.modules = data.map { $0 & 1 == 1 }
    }

    func isDark(row: Int, column: Int) -> Bool {
        guard (0..<width).contains(row), (0..<width).contains(column) else { return false }
        return modules[row * width + column]
    }

    /// The code as text: two module rows per line in half-block characters (`▀`, `▄`, `█`, space),
    /// dark modules drawn in the foreground, inside the quiet zone of 4 light modules that ISO/IEC
    /// 18004 asks for. With `colors`, each line is drawn black on white (ANSI), so that the code
    /// scans on a dark terminal too; without, it reads right on a light background only.
    func rendered(colors: Bool) -> String {
        let quiet = 4
        let range = -quiet..<(width + quiet)
        var lines: [String] = []
        var row = -quiet
        while row < width + quiet {
            var line = colors ? "\u{1B}[30;47m" : ""
            for column in range {
                switch (isDark(row: row, column: column), isDark(row: row + 1, column: column)) {
                case (true, true): line += "█"
                case (true, false): line += "▀"
                case (false, true): line += "▄"
                case (false, false): line += " "
                }
            }
            if colors { line += "\u{1B}[0m" }
            lines.append(line)
            row += 2
        }
        return lines.joined(separator: "\n")
    }
}

/// libqrencode's two functions, loaded once per process.
private struct QREncodeLibrary: @unchecked Sendable {
    typealias Encode = @convention(c) (UnsafePointer<CChar>?, Int32, QRecLevel, QRencodeMode, Int32) -> UnsafeMutablePointer<QRcode>?
    let encodeString: Encode
    let free: @convention(c) (UnsafeMutablePointer<QRcode>?) -> Void

    /// On Linux the soname of libqrencode 4, found by the loader's usual search; on macOS absolute
    /// paths only (Homebrew's and /usr/local's), so that no copy in the current directory is taken.
    #if canImport(Darwin)
    static let names = ["/opt/homebrew/lib/libqrencode.4.dylib", "/usr/local/lib/libqrencode.4.dylib"]
    #else
    static let names = ["libqrencode.so.4"]
    #endif

    static let shared: Result<QREncodeLibrary, OIDCError> = load()

    private static func load() -> Result<QREncodeLibrary, OIDCError> {
        guard let handle = names.lazy.compactMap({ dlopen($0, RTLD_NOW | RTLD_LOCAL) }).first else {
            return .failure(OIDCError(
                .invalidArgument,
                "--qr needs libqrencode 4, which could not be loaded (\(names.joined(separator: ", "))): install it (Debian: apt-get install libqrencode4; macOS: brew install qrencode), or leave out --qr."
            ))
        }
        guard let encode = dlsym(handle, "QRcode_encodeString").map({ unsafeBitCast($0, to: Encode.self) }),
            let free = dlsym(handle, "QRcode_free").map({ unsafeBitCast($0, to: (@convention(c) (UnsafeMutablePointer<QRcode>?) -> Void).self) })
        else {
            return .failure(OIDCError(.invalidArgument, "--qr: the libqrencode found lacks QRcode_encodeString or QRcode_free."))
        }
        return .success(QREncodeLibrary(encodeString: encode, free: free))
    }
}
