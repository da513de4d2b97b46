import RoomcastLogging

/// Whether any node has been heard since the aggregator first connected, and when to say that
/// none has.
///
/// Every edge agent keeps a retained status on the broker and sends a heartbeat a second, so an
/// aggregator whose subscriptions work hears a node within seconds of connecting. Hearing none
/// for `patience` means the nodes' messages do not reach it: the agents use another broker or
/// another topic prefix, or the broker's ACL lets the aggregator subscribe but delivers nothing
/// (mosquitto's `acl_file` grants a subscription to topics the user may not read). Nothing else
/// would show it: no beacon is decided, none is published away, and `/healthz` says ok.
struct FirstNodeWait {
    /// Longer than a Pi takes to boot and connect after a power cut it shared with the
    /// aggregator's host.
    static let patience: Double = 120

    private(set) var heard = false
    /// Said at `patience`, then ever further apart up to hourly while none is heard.
    private var lines = LogPacing(interval: 600)
    private var said = false

    enum Line: Equatable {
        /// No node heard `waited` seconds after connecting.
        case noneHeard(waited: Double)
        /// The first node heard after `noneHeard` was said, `waited` seconds after connecting.
        case heardAtLast(waited: Double)
    }

    /// A message from a node (a reading, a heartbeat, a status, accepted or not).
    mutating func nodeHeard() { heard = true }

    /// Whether none has been heard for `patience` since `connectedAt`, as of `now`.
    func overdue(now: Double, connectedAt: Double?) -> Bool {
        guard !heard, let connectedAt else { return false }
        return now - connectedAt >= Self.patience
    }

    /// The line due at `now`, if any. `connectedAt`: the first connection (nil: not yet);
    /// `listening`: the aggregator reads the broker now (not deaf or draining a backlog, when
    /// nothing heard says nothing of the nodes).
    mutating func due(now: Double, connectedAt: Double?, listening: Bool) -> Line? {
        guard let connectedAt else { return nil }
        if heard {
            guard said else { return nil }
            said = false
            return .heardAtLast(waited: now - connectedAt)
        }
        guard listening, overdue(now: now, connectedAt: connectedAt), lines.admit(now: now).admit else { return nil }
        said = true
        return .noneHeard(waited: now - connectedAt)
    }
}
