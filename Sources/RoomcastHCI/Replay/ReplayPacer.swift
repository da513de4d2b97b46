#if canImport(Glibc)
import Glibc
#endif

/// Holds a replay thread back so records come out at the capture's pace
/// times `factor` (nil: no waiting). The timestamps handed on are always the
/// capture's own, so what a replay yields does not depend on the pace.
struct ReplayPacer {
    let factor: Double?
    private var captureStart: Double?
    private var wallStart: Double = 0

    init(speed: ReplaySpeed) { factor = speed.factor }

    /// True when the record captured at `timestamp` is due within `slack` seconds.
    func isDue(_ timestamp: Double, slack: Double = 0) -> Bool {
        guard let factor, let start = captureStart else { return true }
        return wallStart + max(0, timestamp - start) / factor - Self.monotonic() <= slack
    }

    /// Waits until the record captured at `timestamp` is due (up to `slack`
    /// seconds early, so records close together go out in one wake-up); returns
    /// false when `stopped()` became true while waiting.
    mutating func wait(until timestamp: Double, slack: Double = 0, stopped: () -> Bool) -> Bool {
        guard let factor else { return true }
        guard let start = captureStart else {
            captureStart = timestamp
            wallStart = Self.monotonic()
            return true
        }
        let due = wallStart + max(0, timestamp - start) / factor - slack
        while true {
            let left = due - Self.monotonic()
            if left <= 0 { return true }
            if stopped() { return false }
            var ts = timespec(tv_sec: 0, tv_nsec: Int(min(left, 0.05) * 1e9))
            nanosleep(&ts, nil)
        }
    }

    static func monotonic() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }
}
