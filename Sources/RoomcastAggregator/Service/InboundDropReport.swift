/// When the service logs inbound messages lost in its buffer (fusion behind the broker): the
/// first loss at once, then at most one line every `interval` seconds, each with the total and
/// the number since the line before, so a sustained overload cannot flood the journal.
struct InboundDropReport {
    let interval: Double
    private var reported = 0
    private var lastLine = -Double.infinity

    init(interval: Double = 10) {
        self.interval = interval
    }

    /// The total lost and the number since the last line, when a line is due at `now`.
    mutating func due(dropped: Int, now: Double) -> (total: Int, since: Int)? {
        // A wall clock stepped back makes the last line's time lie ahead: due as well.
        guard dropped > reported, !(0..<interval).contains(now - lastLine) else { return nil }
        defer {
            reported = dropped
            lastLine = now
        }
        return (dropped, dropped - reported)
    }
}
