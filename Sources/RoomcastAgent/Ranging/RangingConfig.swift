import Shared

/// Tuning of per-beacon ranging at one node: RSSI filter, distance model,
/// proximity thresholds and how long a silent beacon is kept (docs/ranging.md). Made from the
/// agent's `ranging:` section (`AgentConfig.rangingConfig`), which is where its values are
/// decoded and checked; its defaults are that section's, so what a test ranges with by default
/// is what a user's agent runs.
public struct RangingConfig: Sendable, Equatable {
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
    public var pathLossExponent: Double = 2.5
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
    public var forgetAfter: Double = 30
    /// Gaps between samples that feed the advertising-interval estimate.
    public var intervalHistory: Int = 16

    public init() {}
}
