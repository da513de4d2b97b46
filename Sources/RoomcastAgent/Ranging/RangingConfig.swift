import Shared

/// Tuning of per-beacon ranging at one node: RSSI filter, distance model,
/// proximity thresholds and how long a silent beacon is kept (docs/ranging.md).
public struct RangingConfig: Codable, Sendable, Equatable {
    /// Samples in the sliding median window (odd is best; 1 disables the median).
    public var medianWindow: Int = 3
    /// Samples older than this (seconds) leave the median window even when it is not full,
    /// so a slow beacon's old readings do not hold back a real change.
    public var medianMaxAge: Double = 3
    /// Kalman process noise in dB² per second: how fast the true RSSI may drift. A person
    /// walking past a node a few metres off moves it by 2–3.5 dB a second (docs/ranging.md).
    public var processNoise: Double = 8
    /// Kalman measurement noise in dB² of one median output.
    public var measurementNoise: Double = 16
    /// The Kalman stage; off, the estimate is the median's output (with a window of 1, the
    /// newest sample: no filter at all).
    public var kalman: Bool = true
    /// Innovations beyond this many standard deviations are down-weighted (robust update).
    public var outlierGate: Double = 3
    /// Log-distance path-loss exponent (2 in free space, 2–4 indoors).
    public var pathLossExponent: Double = 2.0
    /// Added to every RSSI this node measures, in dB (receiver calibration).
    public var rxAdjust: Double = 0
    /// Reference RSSI at 1 m for beacons that advertise none and have no override.
    public var defaultPower: Int = -59
    /// Per-beacon reference RSSI at 1 m; wins over what the beacon advertises
    /// (the `beacons[].power` of the site config).
    public var powerOverrides: [BeaconID: Int] = [:]
    /// Distances are clamped to at most this many metres.
    public var maxDistance: Double = 100
    /// Proximity is `immediate` below this distance in metres.
    public var immediateBelow: Double = 0.5
    /// Proximity is `near` below this distance in metres (and `far` from it on).
    public var nearBelow: Double = 3
    /// With no sample for this many seconds, proximity becomes `unknown`.
    public var unknownAfter: Double = 10
    /// With no sample for this many seconds, the beacon is forgotten.
    public var forgetAfter: Double = 60
    /// Gaps between samples that feed the advertising-interval estimate.
    public var intervalHistory: Int = 16

    public init() {}

    /// Every problem with this configuration, each naming its field; empty when valid.
    public func problems() -> [String] {
        var out: [String] = []
        if medianWindow < 1 || medianWindow > 64 { out.append("medianWindow: must be 1...64, is \(medianWindow)") }
        if !(medianMaxAge > 0) { out.append("medianMaxAge: must be > 0") }
        if !(processNoise > 0) { out.append("processNoise: must be > 0") }
        if !(measurementNoise > 0) { out.append("measurementNoise: must be > 0") }
        if !(outlierGate > 0) { out.append("outlierGate: must be > 0") }
        if !(pathLossExponent > 0.5 && pathLossExponent < 10) { out.append("pathLossExponent: must be in 0.5...10") }
        if !rxAdjust.isFinite || abs(rxAdjust) > 60 { out.append("rxAdjust: must be within ±60 dB") }
        if !(maxDistance > 0) { out.append("maxDistance: must be > 0") }
        if !(immediateBelow >= 0 && nearBelow > immediateBelow) {
            out.append("immediateBelow/nearBelow: need 0 <= immediateBelow < nearBelow")
        }
        if !(unknownAfter > 0 && forgetAfter >= unknownAfter) {
            out.append("unknownAfter/forgetAfter: need 0 < unknownAfter <= forgetAfter")
        }
        if intervalHistory < 1 { out.append("intervalHistory: must be >= 1") }
        return out
    }

    enum CodingKeys: String, CodingKey {
        case medianWindow = "median_window"
        case medianMaxAge = "median_max_age"
        case processNoise = "process_noise"
        case measurementNoise = "measurement_noise"
        case outlierGate = "outlier_gate"
        case kalman
        case pathLossExponent = "path_loss_exponent"
        case rxAdjust = "rx_adjust"
        case defaultPower = "default_power"
        case powerOverrides = "power_overrides"
        case maxDistance = "max_distance"
        case immediateBelow = "immediate_below"
        case nearBelow = "near_below"
        case unknownAfter = "unknown_after"
        case forgetAfter = "forget_after"
        case intervalHistory = "interval_history"
    }

    public init(from decoder: Decoder) throws {
        let d = RangingConfig()
        let c = try decoder.container(keyedBy: CodingKeys.self)
        medianWindow = try c.decodeIfPresent(Int.self, forKey: .medianWindow) ?? d.medianWindow
        medianMaxAge = try c.decodeIfPresent(Double.self, forKey: .medianMaxAge) ?? d.medianMaxAge
        processNoise = try c.decodeIfPresent(Double.self, forKey: .processNoise) ?? d.processNoise
        measurementNoise = try c.decodeIfPresent(Double.self, forKey: .measurementNoise) ?? d.measurementNoise
        outlierGate = try c.decodeIfPresent(Double.self, forKey: .outlierGate) ?? d.outlierGate
        kalman = try c.decodeIfPresent(Bool.self, forKey: .kalman) ?? d.kalman
        pathLossExponent = try c.decodeIfPresent(Double.self, forKey: .pathLossExponent) ?? d.pathLossExponent
        rxAdjust = try c.decodeIfPresent(Double.self, forKey: .rxAdjust) ?? d.rxAdjust
        defaultPower = try c.decodeIfPresent(Int.self, forKey: .defaultPower) ?? d.defaultPower
        powerOverrides = try c.decodeIfPresent([BeaconID: Int].self, forKey: .powerOverrides) ?? d.powerOverrides
        maxDistance = try c.decodeIfPresent(Double.self, forKey: .maxDistance) ?? d.maxDistance
        immediateBelow = try c.decodeIfPresent(Double.self, forKey: .immediateBelow) ?? d.immediateBelow
        nearBelow = try c.decodeIfPresent(Double.self, forKey: .nearBelow) ?? d.nearBelow
        unknownAfter = try c.decodeIfPresent(Double.self, forKey: .unknownAfter) ?? d.unknownAfter
        forgetAfter = try c.decodeIfPresent(Double.self, forKey: .forgetAfter) ?? d.forgetAfter
        intervalHistory = try c.decodeIfPresent(Int.self, forKey: .intervalHistory) ?? d.intervalHistory
    }
}
