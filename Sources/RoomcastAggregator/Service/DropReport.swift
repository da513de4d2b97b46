import RoomcastLogging

/// When the service logs messages lost in one of its buffers (inbound: fusion behind the broker;
/// outbound: a broker that has stopped acknowledging): the first loss at once, then ever further
/// apart while losses go on (`LogPacing`: from `interval` seconds up to hourly), each line with the
/// total and the number since the line before, so a sustained overload or a long outage cannot
/// flood the journal.
struct DropReport {
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
