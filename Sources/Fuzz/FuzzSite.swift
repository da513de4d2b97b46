import Shared

/// The home the aggregator harnesses fuse into: two positioned rooms whose nodes transmit
/// their own beacons (so calibration is learned and resumed), and an unpositioned hall node.
/// Times are near the seeds' `ts` (1732880000), so a reading from a seed reaches fusion.
enum FuzzSite {
    static let topics = Topics()
    static let start = 1_732_880_000.0
    static let kitchenBeacon = BeaconID("ibeacon:e06f95e4-fcfc-42c6-b4f8-f6bae87ea1a0-900-1")!
    static let officeBeacon = BeaconID("ibeacon:e06f95e4-fcfc-42c6-b4f8-f6bae87ea1a0-900-2")!
    static let cat = BeaconID("ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0-675-23")!

    static let site = SiteModel(
        rooms: [.init(name: "kitchen", floor: 0, polygon: [[0, 0], [4, 0], [4, 4], [0, 4]]),
                .init(name: "office", floor: 0, polygon: [[4, 0], [8, 0], [8, 4], [4, 4]]),
                .init(name: "hall", floor: 0)],
        nodes: [.init(name: "kitchen-pi", room: "kitchen", position: [1, 1, 1], beacon: kitchenBeacon),
                .init(name: "office-pi", room: "office", position: [7, 3, 1], beacon: officeBeacon),
                .init(name: "hall-pi", room: "hall")])

    static func reading(_ node: String, _ id: BeaconID, rssi: Int, ts: Double, seq: UInt64) -> BeaconReading {
        BeaconReading(id: id, node: node, ts: ts, seq: seq, rssi: rssi, rssiFiltered: Double(rssi), power: -59,
                      distance: 2, proximity: .near, kind: .iBeacon, mac: "c8:1f:66:0a:1b:2c")
    }

    /// Topic and payload: the bytes before the first NUL are the topic (MQTT topics cannot hold
    /// U+0000), the rest the payload. Without a NUL the whole input is a payload on `fallback`.
    static func split(_ input: [UInt8], fallback: String) -> (topic: String, payload: [UInt8]) {
        guard let nul = input.firstIndex(of: 0) else { return (fallback, input) }
        return (String(decoding: input[..<nul], as: UTF8.self), Array(input[(nul + 1)...]))
    }

    /// The range checks `InputIntake` applies to a reading, restated: what fusion may be given.
    static func rangeProblem(_ r: BeaconReading) -> String? {
        if !r.ts.isFinite || r.ts < 0 || r.ts > 4_102_444_800 { return "ts \(r.ts)" }
        if !(-127...20).contains(r.rssi) { return "rssi \(r.rssi)" }
        if !r.rssiFiltered.isFinite || r.rssiFiltered < -127 || r.rssiFiltered > 20 { return "rssi_filtered \(r.rssiFiltered)" }
        if !r.distance.isFinite || r.distance < 0 || r.distance > 1000 { return "distance \(r.distance)" }
        if !(-127...20).contains(r.power) { return "power \(r.power)" }
        if let i = r.interval, !i.isFinite || i < 0 || i > 3600 { return "interval \(i)" }
        if let d = r.rssiSD, !d.isFinite || d < 0.01 || d > 100 { return "rssi_sd \(d)" }
        if let p = TopicName.problem(with: r.node) { return "node '\(r.node)' \(p)" }
        if BeaconID(r.id.rawValue) != r.id { return "id '\(r.id)' does not re-validate" }
        return nil
    }
}
