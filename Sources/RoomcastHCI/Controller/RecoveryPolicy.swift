import Shared

/// When to restart a stalled scan, reset the adapter, and how long to wait
/// before reopening an adapter that vanished.
public struct RecoveryPolicy: Sendable, Hashable {
    /// Seconds without any advertising report, while scanning, before the scan is restarted;
    /// 0 never restarts it (`scan.restart_after_s: 0`: a site quiet for hours is not a stall).
    public var stallTimeout: Double
    /// Scan restarts in a row without a report in between before the adapter is reset.
    public var restartsBeforeReset: Int
    /// First wait before reopening, in seconds; doubles up to `maxBackoff`.
    public var initialBackoff: Double
    public var maxBackoff: Double

    public init(stallTimeout: Double = 30, restartsBeforeReset: Int = 3, initialBackoff: Double = 1, maxBackoff: Double = 60) {
        self.stallTimeout = stallTimeout
        self.restartsBeforeReset = restartsBeforeReset
        self.initialBackoff = initialBackoff
        self.maxBackoff = maxBackoff
    }

    /// Whether a silent scan is restarted at all.
    public var watchesStalls: Bool { stallTimeout > 0 }

    /// The wait before reopen attempt `attempt` (0-based): doubled per attempt, at most 32 times.
    public func backoff(attempt: Int) -> Double {
        Backoff.delay(initial: initialBackoff, multiplier: 2, maximum: maxBackoff, steps: min(attempt, 32))
    }
}
