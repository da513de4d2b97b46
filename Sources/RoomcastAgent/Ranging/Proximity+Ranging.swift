import Shared

extension Proximity {
    /// CoreLocation-style class of a distance under `config`'s thresholds.
    public init(distance: Double, config: RangingConfig) {
        if !distance.isFinite || distance < 0 { self = .unknown }
        else if distance < config.immediateBelow { self = .immediate }
        else if distance < config.nearBelow { self = .near }
        else { self = .far }
    }
}
