import Shared

/// Per-beacon ranging at one node, keyed by `BeaconID`: the Linux counterpart of
/// CoreLocation's beacon ranging. Pure: every call takes the time as an argument.
public struct RangingTable: Sendable {
    public var config: RangingConfig
    public private(set) var rangers: [BeaconID: BeaconRanger] = [:]

    public init(config: RangingConfig = RangingConfig()) {
        self.config = config
    }

    /// Folds in one advertisement of `id` heard at `t` with `rssi` (dBm, raw) and,
    /// if the beacon advertises it, its 1 m reference `power`; returns the new estimate,
    /// nil while the beacon has not yet given a usable RSSI (e.g. 127, "not available").
    @discardableResult
    public mutating func ingest(_ id: BeaconID, rssi: Int, power: Int?, at t: Double) -> RangeEstimate? {
        // In place: a copy out and back would copy the ranger's buffers on every advertisement.
        if let i = rangers.index(forKey: id) {
            rangers.values[i].ingest(rssi: rssi, advertised: power, at: t)
            return rangers.values[i].estimate(now: t)
        }
        var ranger = BeaconRanger(id: id, config: config)
        ranger.ingest(rssi: rssi, advertised: power, at: t)
        rangers[id] = ranger
        return ranger.estimate(now: t)
    }

    /// The estimate of `id` at `now`, nil when never heard or forgotten.
    public func estimate(for id: BeaconID, now: Double) -> RangeEstimate? {
        rangers[id]?.estimate(now: now)
    }

    /// Every tracked beacon's estimate at `now`, sorted by id.
    public func estimates(now: Double) -> [RangeEstimate] {
        rangers.keys.sorted().compactMap { rangers[$0]?.estimate(now: now) }
    }

    /// Forgets beacons silent for `config.forgetAfter` and returns their ids, sorted.
    /// (Beacons silent for `unknownAfter` already report proximity `unknown`.)
    @discardableResult
    public mutating func expire(now: Double) -> [BeaconID] {
        let gone = rangers.filter { now - $0.value.lastSeen > config.forgetAfter }.keys.sorted()
        for id in gone { rangers[id] = nil }
        return gone
    }

    public var count: Int { rangers.count }
}
