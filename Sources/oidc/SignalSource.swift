import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The write end of the signal pipe, for the C signal handler (async-signal-safe: a plain global
/// read and `write(2)`); set once, before any handler is installed.
nonisolated(unsafe) private var signalPipeWrite: Int32 = -1

/// The handler every signal taken by ``SignalSource`` goes through: one byte, the signal's
/// number, into the pipe (errno kept, as a handler must).
private let writeSignalToPipe: @convention(c) (Int32) -> Void = { number in
    let saved = errno
    var byte = UInt8(truncatingIfNeeded: number)
    _ = write(signalPipeWrite, &byte, 1)
    errno = saved
}

/// Signal handlers that no signal escapes, however early it comes.
///
/// Dispatch's signal sources need the signal's default action set to `SIG_IGN` first, and they
/// register asynchronously, on a thread of their own: a signal in between was discarded. Ctrl-C in
/// a command's first milliseconds was lost, and a login went on waiting (found trying `oidc login`
/// as a user would). Here the handler is installed with `sigaction` before ``activate(_:queue:handler:)``
/// returns. It writes the signal's number into a pipe, and a dispatch read source on the pipe calls
/// the handlers on their queues: a signal that comes before that source is registered waits in the
/// pipe. Several handlers may listen for one signal; its default action comes back when the last
/// is cancelled.
enum SignalSource {
    /// One handler's registration; ``cancel()`` removes it.
    final class Registration: @unchecked Sendable {
        let number: Int32
        fileprivate let id: Int
        fileprivate init(number: Int32, id: Int) {
            self.number = number
            self.id = id
        }

        func cancel() { SignalSource.remove(self) }
    }

    private struct Listener {
        let id: Int
        let queue: DispatchQueue
        let handler: @Sendable () -> Void
    }

    private static let lock = NSLock()
    nonisolated(unsafe) private static var listeners: [Int32: [Listener]] = [:]
    nonisolated(unsafe) private static var nextID = 0
    nonisolated(unsafe) private static var reader: (any DispatchSourceRead)?

    /// Calls `handler` on `queue` for every `number` signal from now on, instead of its default action.
    @discardableResult
    static func activate(_ number: Int32, queue: DispatchQueue, handler: @escaping @Sendable () -> Void) -> Registration {
        lock.withLock {
            startReading()
            nextID += 1
            let first = listeners[number, default: []].isEmpty
            listeners[number, default: []].append(Listener(id: nextID, queue: queue, handler: handler))
            if first {
                var action = sigaction()
                action.__sigaction_handler.sa_handler = writeSignalToPipe
                sigemptyset(&action.sa_mask)
                action.sa_flags = SA_RESTART
                sigaction(number, &action, nil)
            }
            return Registration(number: number, id: nextID)
        }
    }

    private static func remove(_ registration: Registration) {
        lock.withLock {
            listeners[registration.number]?.removeAll { $0.id == registration.id }
            if listeners[registration.number]?.isEmpty ?? false {
                listeners[registration.number] = nil
                signal(registration.number, SIG_DFL)
            }
        }
    }

    /// The pipe and its read source, once (under the lock).
    private static func startReading() {
        guard reader == nil else { return }
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { fatalError("oidc: cannot make the signal pipe (errno \(errno))") }
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        // A full pipe (thousands of signals unread) drops signals rather than blocking the handler.
        _ = fcntl(ends[1], F_SETFL, fcntl(ends[1], F_GETFL) | O_NONBLOCK)
        _ = fcntl(ends[0], F_SETFL, fcntl(ends[0], F_GETFL) | O_NONBLOCK)
        signalPipeWrite = ends[1]
        let source = DispatchSource.makeReadSource(fileDescriptor: ends[0], queue: DispatchQueue(label: "oidc.signal-pipe"))
        source.setEventHandler { deliver(from: ends[0]) }
        source.resume()
        reader = source
    }

    private static func deliver(from fd: Int32) {
        var bytes = [UInt8](repeating: 0, count: 64)
        let count = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        guard count > 0 else { return }
        for byte in bytes[..<count] {
            let targets = lock.withLock { listeners[Int32(byte)] ?? [] }
            for target in targets { target.queue.async(execute: target.handler) }
        }
    }
}
