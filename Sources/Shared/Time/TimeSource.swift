import Foundation
import Synchronization

/// Where "now" comes from. Deciding logic takes `now` as an argument; only the
/// outer services read a `TimeSource`, so replay can drive them on a virtual clock.
public protocol TimeSource: Sendable {
    /// Unix seconds.
    func now() -> Double
}

/// The wall clock.
public struct SystemTimeSource: TimeSource {
    public init() {}
    public func now() -> Double { Date().timeIntervalSince1970 }
}

/// Seconds on the monotonic clock: for waits and deadlines, which a wall clock stepped back or
/// forward (NTP, a clock set by hand) would stretch or cut. Not a Unix time.
public struct MonotonicTimeSource: TimeSource {
    public init() {}
    public func now() -> Double { Syscall.monotonicSeconds() }
}

/// Seconds since boot, suspended time included: what the wall clock should have advanced by,
/// so a difference tells a step of the wall clock (NTP, a clock set by hand) from time passing,
/// a suspend included. Not a Unix time.
public struct BootTimeSource: TimeSource {
    public init() {}
    public func now() -> Double { Syscall.bootSeconds() }
}

/// A clock tests and replays set by hand.
public final class ManualTimeSource: TimeSource {
    private let current: Mutex<Double>

    public init(_ start: Double = 0) { current = Mutex(start) }

    public func now() -> Double { current.withLock { $0 } }

    public func set(_ t: Double) { current.withLock { $0 = t } }

    public func advance(by dt: Double) { current.withLock { $0 += dt } }
}
