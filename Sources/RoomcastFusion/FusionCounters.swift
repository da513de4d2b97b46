/// Why the engine refused a reading.
public enum RejectReason: Int, CaseIterable, Sendable, CustomStringConvertible {
    /// Non-finite time, RSSI out of range, or a non-finite distance.
    case invalid
    /// The site lists its beacons and this is not one of them.
    case unknownBeacon
    /// A node outside the site (with `auto_nodes` off, or beyond `max_nodes`).
    case unknownNode
    /// The node is offline; its in-flight readings are ignored until it returns.
    case nodeOffline
    /// Captured more than `max_age` before now.
    case tooOld
    /// Stamped more than `max_future` ahead of now.
    case tooFarFuture
    /// Same node, beacon and sequence number as an accepted reading.
    case duplicate
    /// An older sequence number (and not newer in time) than one already accepted.
    case outOfOrder
    /// `max_beacons` are already tracked, every one of them placed in a room at some time.
    case capacity

    /// Snake-case name for metrics and logs.
    public var description: String {
        switch self {
        case .invalid: "invalid"
        case .unknownBeacon: "unknown_beacon"
        case .unknownNode: "unknown_node"
        case .nodeOffline: "node_offline"
        case .tooOld: "too_old"
        case .tooFarFuture: "too_far_future"
        case .duplicate: "duplicate"
        case .outOfOrder: "out_of_order"
        case .capacity: "capacity"
        }
    }
}

/// What the engine did with its input, for metrics.
public struct FusionCounters: Sendable, Equatable {
    /// Readings that entered the evidence.
    public var accepted: UInt64 = 0
    /// Accepted readings whose capture time was more than `skew_bound` ahead and was clamped to now.
    public var clampedSkew: UInt64 = 0
    /// Rejected readings, by reason (indexed by `RejectReason.rawValue`).
    public private(set) var rejectedByReason = [UInt64](repeating: 0, count: RejectReason.allCases.count)
    /// Beacons forgotten after `forget_after` away.
    public var forgotten: UInt64 = 0
    /// Beacons never placed in a room, evicted to make room for a newcomer at `max_beacons`.
    public var evicted: UInt64 = 0
    /// Dropped beacons not reported because nobody collected the reports (`takeDropped`).
    public var droppedUnreported: UInt64 = 0
    /// Geometry (grid likelihood) evaluations run.
    public var geometryEvaluations: UInt64 = 0
    /// Readings of the nodes' own beacons, taken for calibration (never tracked).
    public var calibrationReadings: UInt64 = 0

    public init() {}

    /// Readings rejected for `reason`.
    public func rejected(_ reason: RejectReason) -> UInt64 { rejectedByReason[reason.rawValue] }

    /// All readings rejected, whatever the reason.
    public var rejectedTotal: UInt64 { rejectedByReason.reduce(0, +) }

    mutating func count(_ reason: RejectReason) { rejectedByReason[reason.rawValue] &+= 1 }
}
