/// The observed advertising interval of one beacon at one node: the median of
/// recent gaps between receptions. A median ignores the long gaps left by lost
/// packets as long as fewer than half are lost.
public struct IntervalEstimator: Sendable, Equatable {
    /// Gaps shorter than this are one advertisement heard twice (two radios,
    /// or the three advertising channels) rather than an interval.
    public static let minimumGap = 0.015
    public let capacity: Int
    private var gaps: [Double] = []
    private var last: Double?

    public init(capacity: Int = 16) {
        self.capacity = max(1, capacity)
    }

    /// Records a reception at `t`.
    public mutating func record(at t: Double) {
        defer { last = max(t, last ?? t) }
        guard let previous = last else { return }
        let gap = t - previous
        guard gap >= IntervalEstimator.minimumGap else { return }
        gaps.append(gap)
        while gaps.count > capacity { gaps.removeFirst() }  // one, as RSSIFilter's window
    }

    /// The clock stepped back by `seconds`.
    mutating func clockSteppedBack(by seconds: Double) { last = last.map { $0 - seconds } }

    /// Median gap in seconds, nil until two receptions were far enough apart.
    public var interval: Double? {
        let g = gaps
        return g.isEmpty ? nil : RSSIFilter.median(count: g.count) { g[$0] }
    }
}
