/// Something done at most once every `interval` seconds of wall-clock time, the first time at
/// once: a dashboard push, a log line. A wall clock stepped back makes the last time lie ahead;
/// that is due as well, rather than silent until the clock has caught up.
struct Pacer {
    let interval: Double
    private var last = -Double.infinity

    init(interval: Double) {
        self.interval = interval
    }

    /// True when it is due at `now`, which then counts as the last time.
    mutating func due(now: Double) -> Bool {
        guard !(0..<interval).contains(now - last) else { return false }
        last = now
        return true
    }
}
