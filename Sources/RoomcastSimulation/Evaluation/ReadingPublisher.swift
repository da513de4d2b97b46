import Shared

/// What the edge agent does between the radio and MQTT, for replay: ranges each
/// packet in its node's `RangingTable` and emits a `BeaconReading` at most once per
/// `publishInterval` per beacon per node (carrying the newest raw and filtered RSSI).
public struct ReadingPublisher: Sendable {
    public var publishInterval: Double
    private var baseConfig: RangingConfig
    private var rxAdjust: [String: Double]
    private var tables: [String: RangingTable] = [:]
    private var lastPublished: [NodeBeacon: Double] = [:]
    private var folded: [NodeBeacon: Int] = [:]
    private var seq: [String: UInt64] = [:]
    private var beacons: [BeaconID: ScenarioBeacon]

    struct NodeBeacon: Hashable {
        var node: String
        var id: BeaconID
    }

    /// - Parameters:
    ///   - ranging: ranging settings shared by every node.
    ///   - rxAdjust: per-node receiver calibration in dB, added to `ranging.rxAdjust`.
    ///   - beacons: the tracked beacons (for advertised power and kind).
    public init(ranging: RangingConfig = RangingConfig(), rxAdjust: [String: Double] = [:],
                beacons: [ScenarioBeacon], publishInterval: Double = 1.0) {
        self.baseConfig = ranging
        self.rxAdjust = rxAdjust
        self.publishInterval = publishInterval
        self.beacons = Dictionary(beacons.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
    }

    /// Ranges one packet; returns the reading to publish, if one is due.
    public mutating func ingest(_ packet: RawPacket) -> BeaconReading? {
        var table = tables[packet.node] ?? {
            var c = baseConfig
            c.rxAdjust += rxAdjust[packet.node] ?? 0
            return RangingTable(config: c)
        }()
        let beacon = beacons[packet.id]
        guard let estimate = table.ingest(packet.id, rssi: packet.rssi, power: beacon?.measuredPower, at: packet.t)
        else {
            tables[packet.node] = table
            return nil
        }
        let key = NodeBeacon(node: packet.node, id: packet.id)
        folded[key, default: 0] += 1
        var reading: BeaconReading?
        if let last = lastPublished[key], packet.t - last < publishInterval {
            reading = nil
        } else {
            lastPublished[key] = packet.t
            let n = (seq[packet.node] ?? 0) + 1
            seq[packet.node] = n
            var r = BeaconReading(
                id: packet.id, node: packet.node, ts: WireFormat.milliseconds(packet.t), seq: n,
                rssi: packet.rssi, rssiFiltered: (estimate.rssiFiltered * 10).rounded() / 10,
                power: estimate.power, distance: (estimate.distance * 100).rounded() / 100,
                proximity: estimate.proximity, kind: beacon?.beaconKind ?? .device,
                mac: packet.mac ?? ReadingPublisher.syntheticAddress(packet.id))
            r.interval = estimate.interval
            r.samples = folded[key]
            r.name = beacon?.name
            folded[key] = 0
            reading = r
        }
        if table.count > 256 { table.expire(now: packet.t) }
        tables[packet.node] = table
        return reading
    }

    /// A stable made-up address for a beacon whose scenario does not carry one.
    static func syntheticAddress(_ id: BeaconID) -> String {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for b in id.rawValue.utf8 { h = (h ^ UInt64(b)) &* 0x100_0000_01b3 }
        let bytes = (0..<6).map { UInt8(truncatingIfNeeded: h >> (8 * $0)) }
        return bytes.map { b in
            let s = String(b, radix: 16)
            return s.count == 1 ? "0" + s : s
        }.joined(separator: ":")
    }
}
