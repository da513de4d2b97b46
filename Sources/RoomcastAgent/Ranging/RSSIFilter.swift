/// Robust RSSI smoothing for one beacon at one node: a sliding median (drops
/// isolated spikes and nulls from multipath) feeding a 1-D Kalman filter whose
/// process noise grows with the time since the previous sample, so the same
/// settings suit a beacon advertising every 100 ms and one every 10 s. With
/// `RangingConfig.kalman` off, the median's output is the estimate.
/// See docs/ranging.md for the choice and the defaults.
public struct RSSIFilter: Sendable, Equatable {
    public let config: RangingConfig
    private var window: [(t: Double, rssi: Double)] = []
    /// Filtered RSSI in dBm, nil before the first sample.
    public private(set) var estimate: Double?
    /// Variance of `estimate` in dB².
    public private(set) var variance: Double = 0
    private var lastTime: Double?

    public init(config: RangingConfig) {
        self.config = config
    }

    public static func == (a: RSSIFilter, b: RSSIFilter) -> Bool {
        a.config == b.config && a.estimate == b.estimate && a.variance == b.variance && a.lastTime == b.lastTime
            && a.window.map(\.t) == b.window.map(\.t) && a.window.map(\.rssi) == b.window.map(\.rssi)
    }

    /// Folds in one sample (already rx-adjusted) received at `t`; returns the new estimate.
    /// Samples older than the previous one are treated as simultaneous with it.
    @discardableResult
    public mutating func update(rssi: Double, at t: Double) -> Double {
        guard rssi.isFinite else { return estimate ?? rssi }
        let now = max(t, lastTime ?? t)
        let dt = now - (lastTime ?? now)
        lastTime = now

        window.append((now, rssi))
        let cutoff = now - config.medianMaxAge
        // Looked for first: removeAll(where:) rewrites the array even when it removes nothing.
        if window.contains(where: { $0.t < cutoff }) { window.removeAll { $0.t < cutoff } }
        if window.isEmpty { window.append((now, rssi)) }
        // One at a time: usually one, and `removeFirst(_:)`'s generic range replacement costs more.
        while window.count > config.medianWindow { window.removeFirst() }
        let w = window
        let measured = RSSIFilter.median(count: w.count) { w[$0].rssi }

        guard let x = estimate, config.kalman else {
            estimate = measured
            // One sample's noise, or its median's: 1/n for up to two, about π/(2n) for more.
            let n = Double(w.count)
            variance = config.measurementNoise * (n <= 2 ? 1 / n : Double.pi / (2 * n))
            return measured
        }
        let p = variance + config.processNoise * dt
        var r = config.measurementNoise
        let innovation = measured - x
        // Robust update: an innovation far outside what the filter expects is
        // more likely interference than motion; inflating R instead of
        // rejecting keeps a real step change reachable within a few samples.
        let gate = config.outlierGate * (p + r).squareRoot()
        if abs(innovation) > gate {
            r *= (abs(innovation) / gate) * (abs(innovation) / gate)
        }
        let k = p / (p + r)
        estimate = x + k * innovation
        variance = (1 - k) * p
        return estimate!
    }

    /// The clock stepped back by `seconds`: the sample times move back with it, so the next
    /// sample's gap is its real one (held at the last time, every later sample had none: no
    /// process noise, and the filter stopped following the signal until the clock caught up).
    mutating func clockSteppedBack(by seconds: Double) {
        lastTime = lastTime.map { $0 - seconds }
        for i in window.indices { window[i].t -= seconds }
    }

    /// The median of `count` values read through `value`, as `median(_:)` computes it, without
    /// allocating for the small windows ranging uses (it runs for every advertisement).
    static func median(count: Int, _ value: (Int) -> Double) -> Double {
        guard count > 0 else { return .nan }
        guard count <= 32 else { return median((0..<count).map(value)) }
        return withUnsafeTemporaryAllocation(of: Double.self, capacity: count) { buf in
            for k in 0..<count {
                let x = value(k)
                // NaN has no place in an insertion order; leave it to `sorted()` as before.
                guard !x.isNaN else { return median((0..<count).map(value)) }
                var j = k
                while j > 0, buf[j - 1] > x {
                    buf[j] = buf[j - 1]
                    j -= 1
                }
                buf[j] = x
            }
            let m = count / 2
            return count % 2 == 1 ? buf[m] : (buf[m - 1] + buf[m]) / 2
        }
    }

    /// The median of `values` (mean of the middle two for an even count); nil-free input assumed non-empty.
    static func median(_ values: [Double]) -> Double {
        let s = values.sorted()
        guard !s.isEmpty else { return .nan }
        let m = s.count / 2
        return s.count % 2 == 1 ? s[m] : (s[m - 1] + s[m]) / 2
    }
}
