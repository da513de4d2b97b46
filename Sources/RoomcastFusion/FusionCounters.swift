/// What the engine did with its input, for metrics.
public struct FusionCounters: Sendable, Equatable {
    /// Readings that entered the evidence.
    public var accepted: UInt64 = 0
    /// Accepted readings whose capture time was more than `skew_bound` ahead and was clamped to now.
    public var clampedSkew: UInt64 = 0
    /// Rejected readings, by reason (indexed by `FusionRejectReason.rawValue`).
    public private(set) var rejectedByReason = [UInt64](repeating: 0, count: FusionRejectReason.allCases.count)
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
    public func rejected(_ reason: FusionRejectReason) -> UInt64 { rejectedByReason[reason.rawValue] }

    /// All readings rejected, whatever the reason.
    public var rejectedTotal: UInt64 { rejectedByReason.reduce(0, +) }

    mutating func count(_ reason: FusionRejectReason) { rejectedByReason[reason.rawValue] &+= 1 }
}
