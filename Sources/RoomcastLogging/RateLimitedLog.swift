import Synchronization

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
