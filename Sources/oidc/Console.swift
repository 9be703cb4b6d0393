#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// stdout for results only; stderr for everything else.
enum Console {
    static func output(_ text: String) { send(text, to: 1) }
    static func error(_ text: String) { send(text, to: 2) }

    private static func send(_ text: String, to descriptor: Int32) {
        var line = text.hasSuffix("\n") ? text : text + "\n"
        line.withUTF8 { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                if written < 0, errno == EINTR { continue }
                guard written > 0 else { return }
                offset += written
            }
        }
    }
}
