/// The beacon table is full and beacons were evicted or strangers refused: what the agent logs, at once
/// and then ever further apart while it lasts (AgentCore.capacityWarning), so a flood is visible
/// without flooding the journal.
public struct CapacityWarning: Sendable, Equatable {
    /// Seconds between the first two warnings; each later gap is twice the one before, up to an hour.
    public static let interval = 60.0

    /// `max_tracked_beacons`.
    public var capacity: Int
    /// Beacons tracked now.
    public var tracked: Int
    /// Evictions since the agent started.
    public var evicted: UInt64
    /// Evictions since the previous warning.
    public var evictedSinceLast: UInt64
    /// Evictions of known beacons and IRK phones since the agent started.
    public var evictedKnown: UInt64
    /// Strangers not tracked since the agent started, every place taken by known beacons.
    public var refused: UInt64
    /// Refusals since the previous warning.
    public var refusedSinceLast: UInt64

    /// What happened to newcomers since the previous warning.
    public var message: String {
        refusedSinceLast == 0
            ? "beacon table full: evicting the least recently heard beacons (raise max_tracked_beacons if they are real)"
            : "beacon table full of known beacons: strangers are not tracked (raise max_tracked_beacons to track them)"
    }

    /// Log metadata, dotted keys.
    public var metadata: [String: String] {
        ["beacons.max": "\(capacity)", "beacons.tracked": "\(tracked)", "beacons.evicted": "\(evicted)",
         "beacons.evicted_recent": "\(evictedSinceLast)", "beacons.evicted_known": "\(evictedKnown)", "beacons.refused": "\(refused)",
         "beacons.refused_recent": "\(refusedSinceLast)"]
    }
}
