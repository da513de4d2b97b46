import Foundation
import RoomcastFusion
import Shared

/// A seeded generator (SplitMix64) so synthetic noise is the same on every run.
struct SeededRandom: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A normal sample (Box–Muller).
    mutating func gaussian(sigma: Double) -> Double {
        let u1 = max(Double.random(in: 0..<1, using: &self), 1e-12)
        let u2 = Double.random(in: 0..<1, using: &self)
        return sigma * (-2 * log(u1)).squareRoot() * cos(2 * .pi * u2)
    }
}

/// Builds readings and drives an engine on a virtual clock.
struct Synthetic {
    static let tag = BeaconID("ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0-1-1")!
    static let other = BeaconID("ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0-1-2")!

    var seq: [String: UInt64] = [:]

    mutating func reading(_ node: String, rssi: Double, at t: Double, id: BeaconID = Synthetic.tag,
                          interval: Double? = 0.2, power: Int = -59) -> BeaconReading {
        seq[node, default: 0] += 1
        let r = rssi.isFinite ? Int(rssi.rounded()) : 0
        var reading = BeaconReading(id: id, node: node, ts: t, seq: seq[node]!, rssi: r, rssiFiltered: rssi,
                                    power: power, distance: pow(10, (Double(power) - rssi) / 20),
                                    proximity: .near, kind: .iBeacon, mac: "aa:bb:cc:dd:ee:ff")
        reading.interval = interval
        return reading
    }

    /// Two rooms, one node each, no geometry.
    static let twoRooms = SiteModel(
        rooms: [.init(name: "kitchen"), .init(name: "office")],
        nodes: [.init(name: "n-kitchen", room: "kitchen"), .init(name: "n-office", room: "office")])
}

/// The room changes in a stream of decisions for one beacon.
func rooms(_ decisions: [PresenceDecision]) -> [String?] { decisions.map(\.room) }
