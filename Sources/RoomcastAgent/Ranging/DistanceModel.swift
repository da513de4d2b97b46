import Foundation

/// Turns an RSSI and a reference power at 1 m into metres.
public enum DistanceModel: Sendable, Equatable {
    /// `d = 10^((power − rssi) / (10·n))`: the log-distance path-loss model, the one
    /// Roomcast uses (n = `RangingConfig.pathLossExponent`).
    case logDistance(exponent: Double)
    /// `d = a·(rssi/power)^b + c` for ratios ≥ 1, `ratio^10` below: the curve fit of
    /// the Android Beacon Library and ibeacon-ble (a = 0.89976, b = 7.7095, c = 0.111),
    /// kept to compare against their numbers.
    case curveFit(a: Double, b: Double, c: Double)

    /// The AltBeacon / ibeacon-ble constants (fitted for a Nexus 4).
    public static let altBeaconCurve = DistanceModel.curveFit(a: 0.89976, b: 7.7095, c: 0.111)

    /// Distance in metres clamped to `0...maxDistance`; nil when power is 0 ("not measured"),
    /// and for the curve fit also when rssi is (ibeacon-ble's convention for raw values). The
    /// log-distance model takes 0 dBm as the level it is: a filtered level can be exactly 0
    /// (the strongest a controller reports), and read as "not measured" it became the farthest
    /// distance. A positive power is used as given, like ibeacon-ble does (its ratio turns
    /// negative and the even power of the curve fit hides the sign).
    public func distance(rssi: Double, power: Double, maxDistance: Double = 100) -> Double? {
        guard power != 0, rssi.isFinite, power.isFinite else { return nil }
        if case .curveFit = self, rssi == 0 { return nil }
        let p = power
        let d: Double
        switch self {
        case .logDistance(let n):
            d = pow(10, (p - rssi) / (10 * n))
        case .curveFit(let a, let b, let c):
            let ratio = rssi / p
            d = ratio < 1 ? pow(ratio, 10) : a * pow(ratio, b) + c
        }
        guard d.isFinite else { return maxDistance }
        return min(max(d, 0), maxDistance)
    }
}
