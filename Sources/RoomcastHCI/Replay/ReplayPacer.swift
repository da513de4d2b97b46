#if canImport(Glibc)
import Glibc
#endif
import Shared

/// Holds a replay thread back so records come out at the capture's pace
/// times `factor` (nil: no waiting). The timestamps handed on are always the
/// capture's own, so what a replay yields does not depend on the pace.
struct ReplayPacer {
    let factor: Double?
    private var captureStart: Double?
    private var wallStart: Double = 0
    /// The newest capture time paced so far.
    private var latest = -Double.infinity

    /// A gap between records longer than this (capture seconds), either way, is a jump in the
    /// capture's clock (stepped while recording, a corrupt timestamp), not a silence to wait
    /// out: waited out, one record a day ahead held the replay for a day; and one record a day
    /// ahead, with the rest after it back on the true clock, left the rest unpaced.
    static let longestGap = 600.0

    init(speed: ReplaySpeed) { factor = speed.factor }

    /// The monotonic wall time at which the record captured at `timestamp` is due
    /// (now, before the first record started the clock).
    func dueTime(_ timestamp: Double) -> Double {
        guard let factor, let start = captureStart else { return Syscall.monotonicSeconds() }
        return wallStart + max(0, timestamp - start) / factor
    }

    /// A record this far behind the newest one paced (capture seconds) is the capture's clock
    /// stepped back: a capture's records come in order, to within the handling of a packet, and
    /// one stepped back is not due before the capture's clock has made the step up again.
    static let longestStepBack = 1.0

    /// Whether the capture's clock jumped to `timestamp`: back by more than `longestStepBack`,
    /// or ahead by more than `longestGap`.
    func isJump(to timestamp: Double) -> Bool {
        captureStart != nil && (timestamp - latest > Self.longestGap || latest - timestamp > Self.longestStepBack)
    }

    /// Waits until the record captured at `timestamp` is due; the first record
    /// starts the clock. Returns false when `stopped()` became true while waiting.
    mutating func wait(until timestamp: Double, stopped: () -> Bool) -> Bool {
        guard factor != nil else { return true }
        guard captureStart != nil else {
            captureStart = timestamp
            latest = timestamp
            wallStart = Syscall.monotonicSeconds()
            return true
        }
        if isJump(to: timestamp) {
            // Paced on from the newest record: this one is due when that one was, and the
            // capture's clock counts from it.
            wallStart = dueTime(latest)
            captureStart = timestamp
            latest = timestamp
        }
        latest = max(latest, timestamp)
        return Self.sleep(until: dueTime(timestamp), stopped: stopped)
    }

    /// Sleeps until the monotonic time `wall`, looking at `stopped()` at least every 100 ms;
    /// false when it became true.
    static func sleep(until wall: Double, stopped: () -> Bool) -> Bool {
        while true {
            let left = wall - Syscall.monotonicSeconds()
            if left <= 0 { return true }
            if stopped() { return false }
            var ts = timespec(tv_sec: 0, tv_nsec: Int(min(left, 0.1) * 1e9))
            nanosleep(&ts, nil)
        }
    }
}
