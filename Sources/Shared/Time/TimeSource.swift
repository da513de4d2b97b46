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

/// A clock tests and replays set by hand.
public final class ManualTimeSource: TimeSource {
    private let current: Mutex<Double>

    public init(_ start: Double = 0) { current = Mutex(start) }

    public func now() -> Double { current.withLock { $0 } }

    public func set(_ t: Double) { current.withLock { $0 = t } }

    public func advance(by dt: Double) { current.withLock { $0 += dt } }
}
