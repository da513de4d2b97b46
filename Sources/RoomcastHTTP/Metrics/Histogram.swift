/// A fixed-bucket histogram of observations (seconds, say), as Prometheus exposes them.
public struct Histogram: Sendable, Equatable {
    /// Upper bounds, ascending; a value above the last falls only in `+Inf`.
    public let bounds: [Double]
    /// Observations per bucket (not cumulative): `counts[i]` are those ≤ `bounds[i]` and above the one before.
    public private(set) var counts: [UInt64]
    public private(set) var sum: Double = 0
    public private(set) var count: UInt64 = 0

    public init(bounds: [Double]) {
        self.bounds = bounds.sorted()
        self.counts = Array(repeating: 0, count: bounds.count)
    }

    public mutating func observe(_ value: Double) {
        guard value.isFinite else { return }
        if let i = bounds.firstIndex(where: { value <= $0 }) { counts[i] += 1 }
        sum += value
        count += 1
    }
}
