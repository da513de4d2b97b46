import Shared

/// Messages for other ecosystems, each off by default: Home Assistant's
/// `mqtt_room` sensor and ESPresense tooling, so one Roomcast node can stand in
/// for those nodes.
public struct CompatibilityOutputs: Sendable {
    public var mqttRoom: Bool
    public var espresense: Bool
    /// The room reported for this node (`mqtt_room` and ESPresense key by room).
    public let room: String

    public init(room: String, mqttRoom: Bool = false, espresense: Bool = false) {
        self.room = room
        self.mqttRoom = mqttRoom
        self.espresense = espresense
    }

    public var isEnabled: Bool { mqttRoom || espresense }

    /// The extra messages for one published reading.
    public func messages(for r: BeaconReading) -> [OutboundMessage] {
        var out: [OutboundMessage] = []
        if mqttRoom, let m = try? OutboundMessage(topic: "room_presence/\(room)", json: MQTTRoom(
            id: r.id.rawValue, name: r.name ?? r.id.rawValue, distance: rounded(r.distance))) {
            out.append(m)
        }
        if espresense, let m = try? OutboundMessage(topic: "espresense/devices/\(r.id.rawValue)/\(room)", json: ESPresense(
            id: r.id.rawValue, name: r.name, rssiAt1m: r.power, rssi: rounded(r.rssiFiltered), raw: rounded(r.distance),
            distance: rounded(r.distance), mac: r.mac.replacingOccurrences(of: ":", with: ""),
            interval: r.interval.map { Int(($0 * 1000).rounded()) })) {
            out.append(m)
        }
        return out
    }

    private func rounded(_ x: Double) -> Double { (x * 100).rounded() / 100 }

    /// `room_presence/<room>` as Home Assistant's mqtt_room sensor reads it.
    struct MQTTRoom: Encodable {
        var id: String
        var name: String
        var distance: Double
    }

    /// `espresense/devices/<id>/<room>` in ESPresense's field names.
    struct ESPresense: Encodable {
        var id: String
        var name: String?
        var rssiAt1m: Int
        var rssi: Double
        var raw: Double
        var distance: Double
        var mac: String
        var interval: Int?

        enum CodingKeys: String, CodingKey {
            case id, name, rssi, raw, distance, mac, interval
            case rssiAt1m = "rssi@1m"
        }
    }
}
