import RoomcastLogging

/// Whether any node has been heard since the aggregator connected, and when to say that none has.
///
/// Every edge agent sends a heartbeat a second while it is connected, so an aggregator whose
/// subscriptions work hears a node within seconds of connecting. Hearing none for `patience`
/// means the nodes' messages do not reach it: the agents use another broker or another topic
/// prefix, the broker's ACL lets the aggregator subscribe but delivers nothing (mosquitto's
/// `acl_file` grants a subscription to topics the user may not read), or every node is off.
/// Nothing else would show it: no beacon is decided, none is published away, and `/healthz` says
/// ok. Only live messages count: a retained status stays on the broker after its node has moved
/// to another one. Each connection waits afresh (an ACL changed while the aggregator ran shows
/// at the broker's restart).
struct FirstNodeWait {
    /// Longer than a Pi takes to boot and connect after a power cut it shared with the
    /// aggregator's host.
    static let patience: Double = 120
    /// The most one step of the wait may count: the steps come every half second, so a longer
    /// one is the wall clock stepping forward (NTP setting a Pi's clock after boot) or this
    /// process stalled, neither of which is time the nodes had to be heard.
    static let longestStep: Double = 2

    private(set) var heard = false
    /// Seconds listened since the connection without a node heard.
    private var listened = 0.0
    private var lastStep: Double?
    /// Said at `patience`, then ever further apart up to hourly while none is heard.
    private var lines = LogPacing(interval: 600)
    private var said = false

    enum Line: Equatable {
        /// No node heard in `listened` seconds of listening.
        case noneHeard(listened: Double)
        /// The first node heard after `noneHeard` was said.
        case heardAtLast
    }

    /// A connection (the first or a reconnect): the wait starts again.
    mutating func connected() {
        heard = false
        listened = 0
        lastStep = nil
    }

    /// A live message from a node (a reading, a heartbeat, a status, accepted or not).
    mutating func nodeHeard() { heard = true }

    /// No node heard for `patience` of listening.
    var overdue: Bool { !heard && listened >= Self.patience }

    /// One step at `now` (the runtime's tick); `listening`: the aggregator reads the broker now
    /// (not deaf or draining a backlog, when nothing heard says nothing of the nodes). The line
    /// due, if any.
    mutating func step(now: Double, listening: Bool) -> Line? {
        defer { lastStep = now }
        if heard {
            guard said else { return nil }
            said = false
            return .heardAtLast
        }
        if listening, let lastStep { listened += min(max(0, now - lastStep), Self.longestStep) }
        guard overdue, lines.admit(now: now).admit else { return nil }
        said = true
        return .noneHeard(listened: listened)
    }
}
