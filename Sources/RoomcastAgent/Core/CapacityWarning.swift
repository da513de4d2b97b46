/// The beacon table is full and beacons were evicted: what the agent logs, at most once
/// per `interval` (AgentCore.capacityWarning), so a flood is visible without flooding the journal.
public struct CapacityWarning: Sendable, Equatable {
    /// Seconds between two warnings at most.
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

    /// Log metadata, dotted keys.
    public var metadata: [String: String] {
        ["beacons.max": "\(capacity)", "beacons.tracked": "\(tracked)", "beacons.evicted": "\(evicted)",
         "beacons.evicted_recent": "\(evictedSinceLast)", "beacons.evicted_known": "\(evictedKnown)"]
    }
}
