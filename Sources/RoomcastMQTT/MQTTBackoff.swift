import Shared

/// Capped exponential backoff between connection attempts, with optional jitter.
///
/// Pure: the delay depends only on the number of consecutive failures and a
/// random draw the caller supplies, so tests pin it exactly.
public struct MQTTBackoff: Sendable, Hashable, Codable {
    /// Delay after the first failure, in seconds.
    public var initial: Double
    /// Upper bound for any delay, in seconds.
    public var maximum: Double
    /// Growth factor per consecutive failure (2 doubles the delay).
    public var multiplier: Double
    /// Fraction of the delay taken off at random (0 = none, 0.5 = up to half),
    /// so that many agents restarted together do not reconnect in lockstep.
    public var jitter: Double

    /// A backoff policy; the defaults suit a broker on the local network.
    public init(initial: Double = 0.5, maximum: Double = 30, multiplier: Double = 2, jitter: Double = 0.2) {
        self.initial = initial
        self.maximum = maximum
        self.multiplier = multiplier
        self.jitter = jitter
    }

    /// The delay before the next attempt after `failures` consecutive failures
    /// (1 = the first failure); `random` is a draw in 0..<1.
    public func delay(afterFailures failures: Int, random: Double) -> Double {
        let grown = Backoff.delay(initial: initial, multiplier: multiplier, maximum: maximum, steps: max(failures, 1) - 1)
        let base = min(max(grown, 0), maximum)
        let j = min(max(jitter, 0), 1)
        let r = min(max(random, 0), 1)
        return base * (1 - j * r)
    }

    /// Every problem with these values, each prefixed by `path`.
    public func problems(at path: String) -> [String] {
        var out: [String] = []
        if !(initial > 0) { out.append("\(path).initial must be > 0 seconds (got \(initial))") }
        if !(maximum >= initial) { out.append("\(path).maximum must be >= initial (got \(maximum) < \(initial))") }
        if !(multiplier >= 1) { out.append("\(path).multiplier must be >= 1 (got \(multiplier))") }
        if !(0...1).contains(jitter) { out.append("\(path).jitter must be within 0...1 (got \(jitter))") }
        return out
    }
}
