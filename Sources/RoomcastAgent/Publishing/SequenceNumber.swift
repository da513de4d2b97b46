/// The per-node reading sequence: strictly increasing, also across restarts.
///
/// It starts at the start time in microseconds, so a restarted agent
/// continues above where it stopped unless it published more than a million
/// readings a second on average, and a replay (whose clock is the capture's)
/// numbers identically every run.
public struct SequenceNumber: Sendable {
    public private(set) var current: UInt64

    public init(startTime: Double) {
        current = startTime > 0 && startTime.isFinite ? UInt64(startTime * 1_000_000) : 0
    }

    public mutating func next() -> UInt64 {
        current &+= 1
        return current
    }
}
