/// A small logger shaped like swift-log: a value passed explicitly, constant
/// messages, data in dotted metadata keys (`hci.device`, `mqtt.topic`).
public struct Logger: Sendable {
    public enum Level: Int, Comparable, Sendable, CaseIterable, CustomStringConvertible {
        case trace, debug, info, notice, warning, error, critical

        public static func < (a: Level, b: Level) -> Bool { a.rawValue < b.rawValue }

        public var description: String {
            switch self {
            case .trace: "trace"
            case .debug: "debug"
            case .info: "info"
            case .notice: "notice"
            case .warning: "warning"
            case .error: "error"
            case .critical: "critical"
            }
        }

        public init?(name: String) {
            guard let l = Level.allCases.first(where: { $0.description == name.lowercased() }) else { return nil }
            self = l
        }
    }

    public typealias Metadata = [String: String]

    public let label: String
    public var logLevel: Level
    public var metadata: Metadata
    private let handler: any LogHandler

    public init(label: String, level: Level = .info, handler: any LogHandler = StderrLogHandler()) {
        self.label = label
        self.logLevel = level
        self.metadata = [:]
        self.handler = handler
    }

    public subscript(metadataKey key: String) -> String? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(level: Level, _ message: @autoclosure () -> String, metadata extra: @autoclosure () -> Metadata = [:]) {
        guard level >= logLevel else { return }
        var merged = metadata
        for (k, v) in extra() { merged[k] = v }
        handler.log(LogRecord(level: level, label: label, message: message(), metadata: merged))
    }

    public func trace(_ m: @autoclosure () -> String, metadata: @autoclosure () -> Metadata = [:]) { log(level: .trace, m(), metadata: metadata()) }
    public func debug(_ m: @autoclosure () -> String, metadata: @autoclosure () -> Metadata = [:]) { log(level: .debug, m(), metadata: metadata()) }
    public func info(_ m: @autoclosure () -> String, metadata: @autoclosure () -> Metadata = [:]) { log(level: .info, m(), metadata: metadata()) }
    public func notice(_ m: @autoclosure () -> String, metadata: @autoclosure () -> Metadata = [:]) { log(level: .notice, m(), metadata: metadata()) }
    public func warning(_ m: @autoclosure () -> String, metadata: @autoclosure () -> Metadata = [:]) { log(level: .warning, m(), metadata: metadata()) }
    public func error(_ m: @autoclosure () -> String, metadata: @autoclosure () -> Metadata = [:]) { log(level: .error, m(), metadata: metadata()) }
    public func critical(_ m: @autoclosure () -> String, metadata: @autoclosure () -> Metadata = [:]) { log(level: .critical, m(), metadata: metadata()) }

    /// A logger that discards everything (for tests and benchmarks).
    public static var silent: Logger { Logger(label: "silent", level: .critical, handler: NullLogHandler()) }
}

/// One log line.
public struct LogRecord: Sendable, Equatable {
    public var level: Logger.Level
    public var label: String
    public var message: String
    public var metadata: Logger.Metadata
}
