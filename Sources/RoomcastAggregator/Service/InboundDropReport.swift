/// When the service logs inbound messages lost in its buffer (fusion behind the broker): the
/// first loss at once, then at most one line every `interval` seconds, each with the total and
/// the number since the line before, so a sustained overload cannot flood the journal.
struct InboundDropReport {
    private var lines: Pacer
    private var reported = 0

    init(interval: Double = 10) {
        lines = Pacer(interval: interval)
    }

    /// The total lost and the number since the last line, when a line is due at `now`.
    mutating func due(dropped: Int, now: Double) -> (total: Int, since: Int)? {
        guard dropped > reported, lines.due(now: now) else { return nil }
        defer { reported = dropped }
        return (dropped, dropped - reported)
    }
}
