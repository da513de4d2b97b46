import Shared

/// Region monitoring at one node (CoreLocation's didEnterRegion /
/// didExitRegion): a region is entered when any of its beacons is heard and
/// exited only after none has been heard for `exitDelay` seconds, so a
/// missed advertisement is not an exit. One event per transition.
public struct RegionTracker: Sendable {
    public var exitDelay: Double
    public let node: String

    struct Inside: Sendable {
        var lastSeen: Double
        var lastBeacon: BeaconID
    }

    private var inside: [String: Inside] = [:]

    public init(node: String, exitDelay: Double = 30) {
        self.node = node
        self.exitDelay = exitDelay
    }

    /// A beacon belonging to `regions` was heard at `ts`; returns enter events.
    public mutating func heard(_ id: BeaconID, inRegions regions: [String], ts: Double) -> [RegionEvent] {
        var events: [RegionEvent] = []
        for region in regions {
            if inside[region] == nil {
                events.append(RegionEvent(ts: ts, node: node, region: region, event: .enter, id: id))
            }
            inside[region] = Inside(lastSeen: max(ts, inside[region]?.lastSeen ?? ts), lastBeacon: id)
        }
        return events
    }

    /// Exits that have fallen due by `now`, oldest region name first.
    public mutating func expire(now: Double) -> [RegionEvent] {
        var events: [RegionEvent] = []
        for region in inside.keys.sorted() {
            guard let s = inside[region], now - s.lastSeen >= exitDelay else { continue }
            inside.removeValue(forKey: region)
            events.append(RegionEvent(ts: now, node: node, region: region, event: .exit, id: s.lastBeacon))
        }
        return events
    }

    /// The node says it is offline (its radio closed): its regions end with it as at a stop,
    /// with no exit, since nothing left; once it hears again, the first advertisement of a
    /// region's beacon is an `enter`, as after a restart.
    mutating func forgetAll() {
        inside.removeAll()
    }

    /// The clock stepped back by `seconds`: an exit stays due as long after the last beacon
    /// heard as before.
    mutating func clockSteppedBack(by seconds: Double) {
        for region in inside.keys { inside[region]!.lastSeen -= seconds }
    }

    /// Regions currently entered.
    public var entered: [String] { inside.keys.sorted() }
}
