import RoomcastHTTP
import Shared

/// Counts what the published decisions did, for `/metrics`: room switches, goings away and
/// returns, hand-overs to and from another partition's rooms, flaps (a switch undone within
/// `flapWindow`), and how long after a beacon's last reading it was declared away. Pure: fed each tick's changed decisions with the tick time.
/// One small entry per beacon with a decision, dropped with the beacon (`forget`).
public struct PresenceStats: Sendable, Equatable {
    public private(set) var decisions: UInt64 = 0
    public private(set) var switches: UInt64 = 0
    public private(set) var aways: UInt64 = 0
    public private(set) var returns: UInt64 = 0
    /// A beacon that walked into another partition's rooms (`partition:`), or back: it left no
    /// building, so neither an away nor a return.
    public private(set) var handovers: UInt64 = 0
    public private(set) var flaps: UInt64 = 0
    /// Seconds from the last reading to the away decision.
    public private(set) var awayLatency = Histogram(bounds: [5, 10, 15, 20, 30, 45, 60, 90, 120, 300])
    /// Seconds from when the new room's evidence began to lead to the switch: what the
    /// hysteresis costs (the engine says when that lead began; nil from estimators that do not).
    public private(set) var switchLatency = Histogram(bounds: [0.5, 1, 2, 3, 5, 8, 13, 20, 30, 60])
    /// A switch back to the room left less than this many seconds ago counts as a flap.
    public let flapWindow: Double

    private struct Last: Sendable, Equatable {
        var room: String?
        var previous: String?
        var changedAt: Double
    }
    private var last: [BeaconID: Last] = [:]

    public init(flapWindow: Double = 60) {
        self.flapWindow = flapWindow
    }

    /// The aggregator's clock stepped back by `seconds`: a flap is still judged by the time
    /// since the last change.
    mutating func clockSteppedBack(by seconds: Double) {
        for id in last.keys { last[id]!.changedAt -= seconds }
    }

    /// `crossings`: the beacons of `changed` that leave for another partition's rooms, or come
    /// back from them.
    mutating func observe(_ changed: [PresenceDecision], now: Double, crossings: Set<BeaconID> = [],
                          ledSince: (BeaconID) -> Double? = { _ in nil }) {
        for d in changed {
            decisions += 1
            guard let before = last[d.id] else {
                last[d.id] = Last(room: d.room, previous: nil, changedAt: now)
                continue
            }
            guard before.room != d.room else { continue }
            let crossing = crossings.contains(d.id)
            switch (before.room, d.room) {
            case (.some, .some(let room)):
                switches += 1
                if room == before.previous, now - before.changedAt <= flapWindow { flaps += 1 }
                if let lead = ledSince(d.id), lead <= now { switchLatency.observe(now - lead) }
            case (.some, .none) where crossing:
                handovers += 1
            case (.some, .none):
                aways += 1
                if let seen = d.lastSeen { awayLatency.observe(max(0, d.ts - seen)) }
            case (.none, .some) where crossing:
                handovers += 1
            case (.none, .some):
                returns += 1
            case (.none, .none):
                break
            }
            last[d.id] = Last(room: d.room, previous: before.room, changedAt: now)
        }
    }

    mutating func forget(_ id: BeaconID) { last.removeValue(forKey: id) }
}
