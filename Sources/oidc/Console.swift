#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// stdout for results only; stderr for everything else.
enum Console {
    static func output(_ text: String) { send(text, to: 1) }
    static func error(_ text: String) { send(text, to: 2) }
    /// Text on stderr as it is, no newline added (a line rewritten in place on a terminal).
    static func errorFragment(_ text: String) {
        var text = text
        text.withUTF8 { write(to: 2, $0) }
    }
    /// Bytes as they are (a response body), no newline added.
    static func outputBytes(_ bytes: [UInt8]) { bytes.withUnsafeBufferPointer { write(to: 1, $0) } }

    private static func send(_ text: String, to descriptor: Int32) {
        var line = text.hasSuffix("\n") ? text : text + "\n"
        line.withUTF8 { write(to: descriptor, $0) }
    }

    private static func write(to descriptor: Int32, _ buffer: UnsafeBufferPointer<UInt8>) {
        guard let base = buffer.baseAddress else { return }
        var offset = 0
        while offset < buffer.count {
            #if canImport(Glibc)
            let written = Glibc.write(descriptor, base + offset, buffer.count - offset)
            #else
            let written = Darwin.write(descriptor, base + offset, buffer.count - offset)
            #endif
            if written < 0, errno == EINTR { continue }
            guard written > 0 else { return }
            offset += written
        }
    }
}
