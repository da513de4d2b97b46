import Shared

/// Decides when a beacon's reading goes out: the first time it is heard, then
/// at most once per `reportInterval`, plus at once on a significant change
/// (filtered RSSI moved by `significantChangeDB`, distance by
/// `significantChangeMeters`, or the distance crossed a proximity threshold; a threshold of 0 is off).
///
/// It is only asked when an advertisement arrives, so it never publishes more
/// often than the radio gives and never republishes a stale value on a timer.
/// It keeps no table of its own: each beacon's `State` lives with the rest of
/// that beacon's state in the agent's bounded `BeaconTable`, so forgetting or
/// evicting a beacon forgets its publishing state with it.
public struct PublishPolicy: Sendable {
    public var reportInterval: Double
    public var significantChangeDB: Double
    public var significantChangeMeters: Double

    /// What was last published for one beacon, and how many advertisements came since.
    public struct State: Sendable, Equatable {
        var at: Double
        var filtered: Double
        var distance: Double
        var proximity: Proximity
        var samplesSince: Int
    }

    public init(reportInterval: Double = 1.0, significantChangeDB: Double = 6, significantChangeMeters: Double = 1.5) {
        self.reportInterval = reportInterval
        self.significantChangeDB = significantChangeDB
        self.significantChangeMeters = significantChangeMeters
    }

    /// Why a reading is due, or nil when it is not.
    public enum Reason: String, Sendable { case first, interval, significantChange }

    /// Called for each advertisement of a beacon at capture time `ts` with its publishing
    /// `state` (nil: never published, or forgotten); returns whether to publish now and, if
    /// so, how many advertisements it covers. Updates `state` in place. `measured`: false for
    /// an advertisement without an RSSI (HCI's 127): heard, but with no level of its own, it
    /// counts towards the interval and is never a significant change (its `unknown` proximity
    /// is no news, and one in every other report would publish at the advertising rate).
    public func offer(_ state: inout State?, ts: Double, filtered: Double, distance: Double,
                      proximity: Proximity, measured: Bool = true) -> (reason: Reason, samples: Int)? {
        guard let l = state else {
            state = State(at: ts, filtered: filtered, distance: distance, proximity: proximity, samplesSince: 0)
            return (.first, 1)
        }
        let samples = l.samplesSince + 1
        let reason: Reason?
        if ts - l.at >= reportInterval || ts < l.at {
            reason = .interval
        } else if measured && (Self.moved(filtered - l.filtered, by: significantChangeDB)
                                   || Self.moved(distance - l.distance, by: significantChangeMeters)
                                   || proximity != l.proximity) {
            reason = .significantChange
        } else {
            reason = nil
        }
        guard let reason else {
            state?.samplesSince = samples
            return nil
        }
        // Published at the interval, an advertisement without a level of its own leaves the
        // level to compare with as it was: the next measured one is no change against `unknown`.
        state = measured ? State(at: ts, filtered: filtered, distance: distance, proximity: proximity, samplesSince: 0)
                         : State(at: ts, filtered: l.filtered, distance: l.distance, proximity: l.proximity, samplesSince: 0)
        return (reason, samples)
    }

    /// A change of `change` is significant against `threshold`; a threshold of 0 turns that
    /// criterion off (read as "every change", it would publish every advertisement).
    static func moved(_ change: Double, by threshold: Double) -> Bool {
        threshold > 0 && abs(change) >= threshold
    }
}
