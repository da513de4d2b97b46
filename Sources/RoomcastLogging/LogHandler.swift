import Foundation
import Shared
import Synchronization

/// Where log records go.
public protocol LogHandler: Sendable {
    func log(_ record: LogRecord)
}

/// Writes `level label: message key=value ...` lines to stderr. journald adds
/// its own timestamps; `timestamps: true` adds ISO-8601 ones for plain files.
public struct StderrLogHandler: LogHandler {
    public let timestamps: Bool

    public init(timestamps: Bool = false) { self.timestamps = timestamps }

    public func log(_ record: LogRecord) {
        var line = ""
        if timestamps { line += Date().formatted(.iso8601) + " " }
        // journald reads a "<N>" syslog priority prefix on the lines of a unit's
        // stderr (JOURNAL_STREAM is set there); a terminal gets plain lines.
        if Self.underJournald { line += "<\(Self.syslogPriority(record.level))>" }
        line += "\(record.level) \(record.label): \(Self.escaped(record.message, quotes: false))"
        for key in record.metadata.keys.sorted() {
            line += " \(key)=\(Self.quote(record.metadata[key]!))"
        }
        line += "\n"
        StandardStream.error.write(line)
    }

    static let underJournald = ProcessInfo.processInfo.environment["JOURNAL_STREAM"] != nil

    static func syslogPriority(_ level: Logger.Level) -> Int {
        switch level {
        case .trace, .debug: 7
        case .info: 6
        case .notice: 5
        case .warning: 4
        case .error: 3
        case .critical: 2
        }
    }

    /// A metadata value as logfmt writes it: bare when it can be, else quoted, with every
    /// control character escaped. Values come from the network (a node name in a rejected
    /// reading): a raw NUL would end journald's record and start a forged one, and CR or ESC
    /// would rewrite a terminal's line.
    static func quote(_ value: String) -> String {
        if !value.isEmpty && !value.unicodeScalars.contains(where: { $0 == " " || $0 == "\"" || $0 == "=" || isControl($0) }) {
            return value
        }
        return "\"" + escaped(value, quotes: true) + "\""
    }

    /// `value` with `\` (and `"` when `quotes`) escaped and every control character written
    /// as `\n` or `\u{..}`.
    static func escaped(_ value: String, quotes: Bool) -> String {
        var out = ""
        out.unicodeScalars.reserveCapacity(value.unicodeScalars.count)
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\\": out += "\\\\"
            case "\"" where quotes: out += "\\\""
            case "\n": out += "\\n"
            case _ where isControl(scalar): out += "\\u{" + String(scalar.value, radix: 16) + "}"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// C0 and C1 controls, DEL, and the Unicode line and paragraph separators.
    static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) || scalar.value == 0x2028 || scalar.value == 0x2029
    }
}

/// Discards every record.
public struct NullLogHandler: LogHandler {
    public init() {}
    public func log(_ record: LogRecord) {}
}

/// Keeps records in memory, for tests.
public final class InMemoryLogHandler: LogHandler {
    private let storage = Mutex<[LogRecord]>([])

    public init() {}

    public func log(_ record: LogRecord) { storage.withLock { $0.append(record) } }

    public var records: [LogRecord] { storage.withLock { $0 } }

    public func records(atLeast level: Logger.Level) -> [LogRecord] {
        records.filter { $0.level >= level }
    }
}
