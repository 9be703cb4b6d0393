import Foundation
public import Logging
import Synchronization

/// A swift-log handler that keeps every line, for tests: what a handler prints is the label, the
/// level, the message, the metadata (the logger's and the call's) and the error, all rendered here
/// into ``Line/rendered`` (or, message and metadata only, ``Line/text``).
public final class LogRecorder: Sendable {
    /// One line logged.
    public struct Line: Sendable {
        public let label: String
        public let level: Logger.Level
        public let message: String
        public let metadata: Logger.Metadata
        public let error: String?

        /// Everything a handler could print, in one string.
        public var rendered: String {
            "\(level) \(label): \(message) \(fields)" + (error.map { " error=\($0)" } ?? "")
        }

        /// The message and the metadata, `message key=value …`, as a store's log line reads.
        public var text: String { "\(message) \(fields)" }

        private var fields: String { metadata.keys.sorted().map { "\($0)=\(metadata[$0]!)" }.joined(separator: " ") }
    }

    private let lines = Mutex<[Line]>([])

    public init() {}

    /// Every line so far, oldest first.
    public var all: [Line] { lines.withLock { $0 } }

    /// A logger at `trace` whose every line is kept.
    public func logger(_ label: String) -> Logger {
        var logger = Logger(label: label) { label in Handler(label: label, recorder: self) }
        logger.logLevel = .trace
        return logger
    }

    /// The lines of `label` whose message is `message`.
    public func lines(_ label: String, _ message: String) -> [Line] {
        all.filter { $0.label == label && $0.message == message }
    }

    fileprivate func append(_ line: Line) { lines.withLock { $0.append(line) } }

    /// The handler of ``logger(_:)``.
    public struct Handler: LogHandler {
        let label: String
        let recorder: LogRecorder
        public var logLevel: Logger.Level = .trace
        public var metadata: Logger.Metadata = [:]
        public var metadataProvider: Logger.MetadataProvider?

        public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        public func log(event: LogEvent) {
            var all = metadata
            if let provided = metadataProvider?.get() { all.merge(provided) { $1 } }
            if let own = event.metadata { all.merge(own) { $1 } }
            recorder.append(
                Line(label: label, level: event.level, message: event.message.description, metadata: all, error: event.error.map { "\($0)" })
            )
        }
    }
}
