import Foundation
import Logging
import Synchronization

/// A swift-log handler that keeps every line, for tests: what a handler prints is the label, the
/// level, the message, the metadata (the logger's and the call's) and the error, all rendered here
/// into ``Line/rendered``.
final class LogRecorder: Sendable {
    struct Line: Sendable {
        let label: String
        let level: Logger.Level
        let message: String
        let metadata: Logger.Metadata
        let error: String?

        /// Everything a handler could print, in one string.
        var rendered: String {
            let fields = metadata.keys.sorted().map { "\($0)=\(metadata[$0]!)" }.joined(separator: " ")
            return "\(level) \(label): \(message) \(fields)" + (error.map { " error=\($0)" } ?? "")
        }
    }

    private let lines = Mutex<[Line]>([])

    var all: [Line] { lines.withLock { $0 } }

    /// A logger at `trace` whose every line is kept.
    func logger(_ label: String) -> Logger {
        var logger = Logger(label: label) { label in Handler(label: label, recorder: self) }
        logger.logLevel = .trace
        return logger
    }

    /// The lines of `label` whose message is `message`.
    func lines(_ label: String, _ message: String) -> [Line] {
        all.filter { $0.label == label && $0.message == message }
    }

    fileprivate func append(_ line: Line) { lines.withLock { $0.append(line) } }

    struct Handler: LogHandler {
        let label: String
        let recorder: LogRecorder
        var logLevel: Logger.Level = .trace
        var metadata: Logger.Metadata = [:]
        var metadataProvider: Logger.MetadataProvider?

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            var all = metadata
            if let provided = metadataProvider?.get() { all.merge(provided) { $1 } }
            if let own = event.metadata { all.merge(own) { $1 } }
            recorder.append(
                Line(label: label, level: event.level, message: event.message.description, metadata: all, error: event.error.map { "\($0)" })
            )
        }
    }
}
