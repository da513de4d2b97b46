import Shared

/// Decides when a beacon's reading goes out: the first time it is heard, then
/// at most once per `reportInterval`, plus at once on a significant change
/// (filtered RSSI moved by `significantChangeDB`, distance by
/// `significantChangeMeters`, or the proximity class changed).
///
/// It is only asked when an advertisement arrives, so it never publishes more
/// often than the radio gives and never republishes a stale value on a timer.
public struct PublishPolicy: Sendable {
    public var reportInterval: Double
    public var significantChangeDB: Double
    public var significantChangeMeters: Double

    struct Last: Sendable {
        var at: Double
        var filtered: Double
        var distance: Double
        var proximity: Proximity
        var samplesSince: Int
    }

    private var last: [BeaconID: Last] = [:]

    public init(reportInterval: Double = 1.0, significantChangeDB: Double = 6, significantChangeMeters: Double = 1.5) {
        self.reportInterval = reportInterval
        self.significantChangeDB = significantChangeDB
        self.significantChangeMeters = significantChangeMeters
    }

    /// Why a reading is due, or nil when it is not.
    public enum Reason: String, Sendable { case first, interval, significantChange }

    /// Called for each advertisement of `id` at capture time `ts`; returns
    /// whether to publish now and, if so, how many advertisements it covers.
    public mutating func offer(_ id: BeaconID, ts: Double, filtered: Double, distance: Double,
                               proximity: Proximity) -> (reason: Reason, samples: Int)? {
        // One hash lookup per advertisement: the entry is updated in place.
        guard let i = last.index(forKey: id) else {
            last[id] = Last(at: ts, filtered: filtered, distance: distance, proximity: proximity, samplesSince: 0)
            return (.first, 1)
        }
        last.values[i].samplesSince += 1
        let l = last.values[i]
        let reason: Reason?
        if ts - l.at >= reportInterval || ts < l.at {
            reason = .interval
        } else if abs(filtered - l.filtered) >= significantChangeDB
                    || abs(distance - l.distance) >= significantChangeMeters
                    || proximity != l.proximity {
            reason = .significantChange
        } else {
            reason = nil
        }
        guard let reason else { return nil }
        last.values[i] = Last(at: ts, filtered: filtered, distance: distance, proximity: proximity, samplesSince: 0)
        return (reason, l.samplesSince)
    }

    /// Forgets a beacon (no longer heard), so its next reading counts as first.
    public mutating func forget(_ id: BeaconID) { last.removeValue(forKey: id) }

    /// After a broker outage: every beacon's next advertisement goes out at once.
    public mutating func resetAfterReconnect() { last.removeAll(keepingCapacity: true) }

    public var trackedCount: Int { last.count }
}
