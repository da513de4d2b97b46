import Shared

/// Anything that turns node readings into per-beacon room decisions: the
/// fusion engine, and the baseline rules it is scored against. Pure and
/// deterministic: time only enters through `now` (and readings' capture `ts`).
public protocol PresenceEstimator {
    /// Feeds one reading; `now` is when the aggregator received it (the
    /// reading itself is judged by its capture time `reading.ts`).
    mutating func ingest(_ reading: BeaconReading, now: Double)

    /// A node's status changed; an offline node's evidence drops out at once.
    mutating func nodeStatus(_ node: String, online: Bool, now: Double)

    /// Advances time to `now` and returns the decisions that changed since the
    /// previous call: a new room, or going away (`room == nil`).
    mutating func tick(now: Double) -> [PresenceDecision]

    /// The decision in force for `id`, if the beacon has been heard.
    func decision(for id: BeaconID) -> PresenceDecision?

    /// Whether `id` is tracked: heard and not forgotten, placed or not yet.
    func isTracking(_ id: BeaconID) -> Bool

    /// The aggregator could not hear the nodes until `now` (its broker connection was down, or
    /// the process was paused): the silence before `now` says nothing about the beacons, so it
    /// must not count towards away, nor let the room filter forget what it knew.
    mutating func hearingRestored(at now: Double)

    /// `node` is listening: its heartbeat (its readings say so through `ingest`).
    mutating func nodeHeard(_ node: String, now: Double)

    /// The wall clock stepped back by `seconds`: every time kept moves back by as much, so
    /// nothing waits in the future for the clock to catch up.
    mutating func clockSteppedBack(by seconds: Double)

    /// The beacons it stopped tracking since the last call (forgotten, or evicted at capacity).
    mutating func takeDropped() -> [DroppedBeacon]

    /// How full its beacon table is, for a capacity warning (nil: unbounded or not reported).
    var capacityUse: CapacityUse? { get }

    /// What it did with its input (the readings it refused, by reason), for `/metrics`.
    var counters: FusionCounters { get }

    /// When the evidence for the room `id` last switched to began to lead, so the switch's
    /// latency can be measured from it (nil: not known).
    func switchEvidenceSince(for id: BeaconID) -> Double?

    /// Whether `node` is one it made a room of, on a site that lists no nodes (`auto_nodes`).
    func madeNode(_ node: String) -> Bool

    /// Whether it makes a room of each node it hears (a site that lists no nodes, `auto_nodes` on).
    var makesNodes: Bool { get }
}

/// How full an estimator's beacon table is.
public struct CapacityUse: Sendable, Equatable {
    public var tracked: Int
    public var limit: Int
    /// Beacons evicted to make room, and newcomers refused because every tracked one was real.
    public var evicted: UInt64
    public var refused: UInt64
    /// The node whose newcomers were evicted most, and how many.
    public var mostEvictedNode: String?
    public var mostEvictedCount: UInt64

    public init(tracked: Int, limit: Int, evicted: UInt64, refused: UInt64, mostEvictedNode: String?, mostEvictedCount: UInt64) {
        self.tracked = tracked
        self.limit = limit
        self.evicted = evicted
        self.refused = refused
        self.mostEvictedNode = mostEvictedNode
        self.mostEvictedCount = mostEvictedCount
    }
}

extension PresenceEstimator {
    /// Estimators without a notion of silence over time have nothing to adjust.
    public mutating func hearingRestored(at now: Double) {}
    /// Estimators that resume nothing have no use for it.
    public mutating func nodeHeard(_ node: String, now: Double) {}
    /// Estimators that keep no times have nothing to move.
    public mutating func clockSteppedBack(by seconds: Double) {}
    /// Estimators that never drop a beacon report none.
    public mutating func takeDropped() -> [DroppedBeacon] { [] }
    public var capacityUse: CapacityUse? { nil }
    /// Estimators that make no rooms of nodes have made none.
    public func madeNode(_ node: String) -> Bool { false }
    public var makesNodes: Bool { false }
    /// Estimators that count nothing report zeros.
    public var counters: FusionCounters { FusionCounters() }
    public func switchEvidenceSince(for id: BeaconID) -> Double? { nil }
    /// Estimators that decide at the first reading track what they have decided on.
    public func isTracking(_ id: BeaconID) -> Bool { decision(for: id) != nil }
}

/// Resuming after a restart.
public protocol ResumablePresenceEstimator: PresenceEstimator {
    /// Seeds a beacon's decision from the aggregator's own retained output
    /// (read back at start-up), so the first fresh readings are judged against
    /// the room it was in — with the usual hysteresis — instead of from nothing.
    mutating func resume(_ decision: PresenceDecision, now: Double)
}
