import Foundation
import Shared
import Synchronization

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

/// How often one log line that keeps coming back is said: at once, then at most once per
/// `interval` seconds, each gap twice the last, up to `maximumInterval`. A condition that lasts (a
/// node whose clock is off, a Pi that keeps publishing under a name the site does not list) says
/// so a dozen times in its first hours, then hourly, not 8,640 times a day onto a Pi's SD card. So
/// does one that recurs slowly but regularly (an adapter reset every 4 minutes, a save failing
/// every 5): it recurs at its pace, not after a calm. A line that stays away for twice its gap, and
/// twice as long as it stayed away before, has had a calm: it starts again at `interval`.
public struct LogPacing: Sendable, Equatable {
    public let interval: Double
    public let maximumInterval: Double
    /// When it was last said (nil: never), and when it last came (said or not).
    private var lastAt: Double?
    private var lastSeen = 0.0
    /// How long it had stayed away before it last came.
    private var lastQuiet = 0.0
    private var gap: Double
    private var suppressed = 0

    public init(interval: Double = 10, maximumInterval: Double = 3600) {
        self.interval = interval
        self.maximumInterval = max(interval, maximumInterval)
        gap = interval
    }

    /// Whether the line, come again at `now`, is said; also how many were held back since it last was.
    public mutating func admit(now: Double) -> (admit: Bool, suppressed: Int) {
        guard let lastAt else {
            (self.lastAt, lastSeen) = (now, now)
            return (true, 0)
        }
        let quiet = now - lastSeen
        // A last line in the future (the wall clock stepped back) holds nothing back.
        if (0..<gap).contains(now - lastAt) {
            lastSeen = now
            suppressed += 1
            lastQuiet = max(0, quiet)
            return (false, 0)
        }
        gap = isCalm(now: now) ? interval : min(2 * gap, maximumInterval)
        (self.lastAt, lastSeen, lastQuiet) = (now, now, max(0, quiet))
        defer { suppressed = 0 }
        return (true, suppressed)
    }

    /// The wall clock stepped back by `seconds` (forward when negative) and the caller's times
    /// moved with it: the times kept here move too, so the pacing goes on where it was.
    public mutating func clockSteppedBack(by seconds: Double) {
        guard seconds.isFinite else { return }
        lastAt = lastAt.map { $0 - seconds }
        lastSeen -= seconds
    }

    /// Whether the line has had a calm by `now` (a last sighting in the future: the wall clock
    /// stepped back): come again, it would start over at `interval`.
    public func isCalm(now: Double) -> Bool {
        let quiet = now - lastSeen
        return lastAt == nil || quiet < 0 || (quiet >= 2 * gap && quiet >= 2 * lastQuiet)
    }
}

/// `LogPacing` for many lines at once, each by its key (hostile input must not flood the journal).
public final class RateLimitedLog: Sendable {
    private struct State {
        var entries: [String: LogPacing] = [:]
        /// When the full table was last swept for calm keys (at most once per `interval`: a
        /// stranger sending a new key in every message must not make each admission a sweep).
        var sweptAt = -Double.infinity
    }
    private static let overflowKey = "\u{0}overflow"
    private let state = Mutex(State())
    public let interval: Double
    public let maximumInterval: Double
    /// Keys kept at most (they may name things from the network). A full table lets go of keys
    /// that have had a calm, which would start over anyway (a count they held back goes with
    /// them: it is said only when its line comes again); while none has, lines of any further
    /// key share one.
    public let maximumKeys: Int

    public init(interval: Double = 10, maximumInterval: Double = 3600, maximumKeys: Int = 1024) {
        self.interval = interval
        self.maximumInterval = max(interval, maximumInterval)
        self.maximumKeys = max(1, maximumKeys)
    }

    /// True when a line with `key` may be logged at `now`; also returns how
    /// many were suppressed since the last one.
    public func admit(_ key: String, now: Double) -> (admit: Bool, suppressed: Int) {
        state.withLock { s in
            var key = key
            if s.entries[key] == nil && s.entries.count >= maximumKeys - 1 {
                if !(0..<interval).contains(now - s.sweptAt) {
                    s.sweptAt = now
                    s.entries = s.entries.filter { !$0.value.isCalm(now: now) }
                }
                if s.entries.count >= maximumKeys - 1 { key = Self.overflowKey }
            }
            var pacing = s.entries[key] ?? LogPacing(interval: interval, maximumInterval: maximumInterval)
            defer { s.entries[key] = pacing }
            return pacing.admit(now: now)
        }
    }
}
