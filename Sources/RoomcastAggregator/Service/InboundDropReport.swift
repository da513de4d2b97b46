import RoomcastLogging

/// When the service logs inbound messages lost in its buffer (fusion behind the broker): the
/// first loss at once, then ever further apart while losses go on (`LogPacing`: from `interval`
/// seconds up to hourly), each line with the total and the number since the line before, so a
/// sustained overload cannot flood the journal.
struct InboundDropReport {
    private var lines: LogPacing
    private var reported = 0

    init(interval: Double = 10) {
        lines = LogPacing(interval: interval)
    }

    /// The total lost and the number since the last line, when a line is due at `now`.
    mutating func due(dropped: Int, now: Double) -> (total: Int, since: Int)? {
        guard dropped > reported, lines.admit(now: now).admit else { return nil }
        defer { reported = dropped }
        return (dropped, dropped - reported)
    }
}
