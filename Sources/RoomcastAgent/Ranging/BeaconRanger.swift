import Shared
import RoomcastAdvertising

/// Ranging state of one beacon at one node: filter, interval, last sample.
public struct BeaconRanger: Sendable, Equatable {
    public let id: BeaconID
    public let config: RangingConfig
    public private(set) var filter: RSSIFilter
    public private(set) var intervals: IntervalEstimator
    public private(set) var lastRSSI: Int = 0
    public private(set) var lastSeen: Double = -.infinity
    public private(set) var power: Int
    public private(set) var samples: Int = 0
    /// The beacon's own 1 m power as last advertised: a `mac:`, `irk:` or `fp:` identity's
    /// frames without one (an Eddystone-TLM between URL frames, a scan response) keep it.
    public private(set) var advertisedPower: Int?
    /// The proximity class as last decided: it changes only when the filter is sure the beacon
    /// has crossed a threshold (`nextProximity`), so a still tag near one does not flip.
    public private(set) var proximity: Proximity = .unknown
    /// The distance of the filtered level at the power in use, worked out once per advertisement
    /// (the class needs it there, and `range(now:)` is asked for it at once after).
    private var distance: Double = 0

    public init(id: BeaconID, config: RangingConfig) {
        self.id = id
        self.config = config
        self.filter = RSSIFilter(config: config)
        self.intervals = IntervalEstimator(capacity: config.intervalHistory)
        self.power = config.powerOverrides[id] ?? config.defaultPower
    }

    /// RSSI values a controller can really report; HCI uses 127 for "not available".
    public static let validRSSI = -127...20
    /// HCI's "not available".
    public static let unavailableRSSI = 127

    /// Folds in one advertisement heard with `rssi` at `t`. `advertised` is the beacon's
    /// own 1 m power, if it carries one (0 or an implausible value counts as none); one
    /// without keeps the power last advertised, or the distance would jump with each frame.
    /// A packet without a usable RSSI still counts as heard but leaves the filter alone.
    public mutating func ingest(rssi: Int, advertised: Int?, at t: Double) {
        guard t.isFinite else { return }
        if let a = advertised, Beacon.plausibleReferencePower ~= a { advertisedPower = a }
        power = BeaconRanger.referencePower(id: id, advertised: advertisedPower, config: config)
        // A beacon back from a silence (published `unknown`) gets its class afresh.
        if t - lastSeen > config.unknownAfter { proximity = .unknown }
        lastSeen = max(t, lastSeen)
        intervals.record(at: t)
        if BeaconRanger.validRSSI ~= rssi {
            lastRSSI = rssi
            samples += 1
            filter.update(rssi: Double(rssi) + config.rxAdjust, at: t)
        }
        // Also after a frame without an RSSI: it may carry another power, or end a silence.
        if let filtered = filter.estimate {
            distance = BeaconRanger.distance(rssi: filtered, power: power, config: config)
            proximity = BeaconRanger.nextProximity(after: proximity, filtered: filtered, distance: distance,
                                                   sd: filter.variance.squareRoot(), power: power, config: config)
        }
    }

    /// The class after `current` for a filtered level known to within `sd` dB: `current` while the
    /// level's band of two standard deviations each side (at most `maximumMargin`) still reaches
    /// into it, else the class of the level itself. A still tag whose filtered level wanders across
    /// a threshold by less than the filter is sure of keeps its class; one carried across changes a
    /// second or two later, and one moved well past a threshold changes whatever the filter's
    /// spread (`RangingTests` has the figures).
    static func nextProximity(after current: Proximity, filtered: Double, distance d: Double, sd: Double, power: Int,
                              config: RangingConfig) -> Proximity {
        let plain = Proximity(distance: d, config: config)
        guard current != .unknown, plain != current, sd.isFinite, sd > 0 else { return plain }
        let margin = min(2 * sd, maximumMargin)
        let nearest = Proximity(distance: distance(rssi: filtered + margin, power: power, config: config), config: config)
        let farthest = Proximity(distance: distance(rssi: filtered - margin, power: power, config: config), config: config)
        let order: [Proximity] = [.immediate, .near, .far]
        guard let c = order.firstIndex(of: current), let lo = order.firstIndex(of: nearest),
              let hi = order.firstIndex(of: farthest) else { return plain }
        return lo <= c && c <= hi ? current : plain
    }

    /// The widest the hysteresis reaches past a threshold, in dB: a factor of 1.3 in distance at
    /// the default exponent (`near` ends by 3.9 m, and is back within 2.3 m). A slow beacon's or an
    /// unfiltered level's spread is wider, and would hold a class metres past its threshold.
    static let maximumMargin = 3.0

    /// The distance of a filtered level under `config`'s model, at most its `maxDistance`.
    static func distance(rssi: Double, power: Int, config: RangingConfig) -> Double {
        DistanceModel.logDistance(exponent: config.pathLossExponent)
            .distance(rssi: rssi, power: Double(power), maxDistance: config.maxDistance) ?? config.maxDistance
    }

    /// The clock stepped back by `seconds`: every time kept moves back with it.
    mutating func clockSteppedBack(by seconds: Double) {
        lastSeen -= seconds
        filter.clockSteppedBack(by: seconds)
        intervals.clockSteppedBack(by: seconds)
    }

    /// Override from config, else the advertised power when plausible, else the default.
    public static func referencePower(id: BeaconID, advertised: Int?, config: RangingConfig) -> Int {
        // Checked for emptiness first: hashing the id on every advertisement is measurable.
        if !config.powerOverrides.isEmpty, let o = config.powerOverrides[id] { return o }
        if let a = advertised, Beacon.plausibleReferencePower ~= a { return a }
        return config.defaultPower
    }

    /// The estimate at `now`; proximity is `unknown` once the beacon has been silent
    /// for `config.unknownAfter`. Nil before the first sample.
    public func estimate(now: Double) -> RangeEstimate? {
        guard let r = range(now: now) else { return nil }
        return RangeEstimate(
            id: id, rssi: lastRSSI, rssiFiltered: r.rssiFiltered, power: r.power, distance: r.distance,
            proximity: r.proximity, interval: intervals.interval, lastSeen: lastSeen, samples: samples)
    }

    /// What the publish policy and a reading need of an estimate, without its id and interval: the agent
    /// asks for it on every advertisement, and the interval (a median over the recent gaps) and the id
    /// (a string to retain and release) are needed only for the readings it publishes.
    public struct Range: Sendable, Equatable {
        public var rssiFiltered: Double
        public var power: Int
        public var distance: Double
        public var proximity: Proximity
        /// The filter's standard deviation of `rssiFiltered` (dB); nil when nothing was filtered.
        public var rssiSD: Double?

        public init(rssiFiltered: Double, power: Int, distance: Double, proximity: Proximity, rssiSD: Double? = nil) {
            self.rssiFiltered = rssiFiltered
            self.power = power
            self.distance = distance
            self.proximity = proximity
            self.rssiSD = rssiSD
        }
    }

    /// `estimate(now:)`'s filtered RSSI, power, distance and proximity; nil before the first sample.
    public func range(now: Double) -> Range? {
        guard let filtered = filter.estimate else { return nil }
        let silent = now - lastSeen > config.unknownAfter
        return Range(rssiFiltered: filtered, power: power,
                     distance: distance,
                     proximity: silent ? .unknown : proximity, rssiSD: filter.variance.squareRoot())
    }
}
