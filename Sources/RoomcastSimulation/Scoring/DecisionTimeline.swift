import Shared

/// The room decisions an estimator made over a run, per beacon: the times at
/// which the decision changed and to what (nil = away).
public struct DecisionTimeline: Sendable, Equatable {
    /// One change of decision.
    public struct Change: Sendable, Equatable {
        public var t: Double
        public var room: String?

        public init(t: Double, room: String?) {
            self.t = t
            self.room = room
        }
    }

    public private(set) var changes: [BeaconID: [Change]] = [:]

    public init() {}

    /// Records that the decision for `id` is `room` from `t` on; a repeat of the
    /// decision in force is ignored. Times must not go backwards per beacon.
    public mutating func record(_ id: BeaconID, room: String?, at t: Double) {
        var list = changes[id] ?? []
        if let last = list.last {
            if last.room == room { return }
            if t < last.t { return }
        } else if room == nil {
            return  // "away" before ever being placed is the initial state
        }
        list.append(Change(t: t, room: room))
        changes[id] = list
    }

    /// The decision in force for `id` at `t` (nil before the first decision or when away).
    public func room(of id: BeaconID, at t: Double) -> String? {
        guard let list = changes[id], !list.isEmpty else { return nil }
        // Binary search for the last change at or before t.
        var lo = 0, hi = list.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if list[mid].t <= t { lo = mid + 1 } else { hi = mid }
        }
        return lo == 0 ? nil : list[lo - 1].room
    }
}
