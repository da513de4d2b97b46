import Shared

/// One message layout for another ecosystem: its key under the agent's `outputs:` and the
/// message it makes of a published reading for the node's room. `all` is the list of them; a
/// new layout is a value there (and its row in docs/configuration.md).
public struct CompatibilityOutput: Sendable, Equatable, CustomStringConvertible {
    /// The key under `outputs:` that turns it on (`mqtt_room`).
    public let key: String
    let message: @Sendable (BeaconReading, _ room: String) -> OutboundMessage?

    public static func == (a: CompatibilityOutput, b: CompatibilityOutput) -> Bool { a.key == b.key }

    public var description: String { key }

    /// `room_presence/<room>` as Home Assistant's mqtt_room sensor reads it.
    public static let mqttRoom = CompatibilityOutput(key: "mqtt_room") { r, room in
        try? OutboundMessage(topic: Topics.Compatibility.mqttRoom(room), json: MQTTRoomReport(
            id: r.id.rawValue, name: r.name ?? r.id.rawValue, distance: rounded(r.distance)))
    }

    /// `espresense/devices/<id>/<room>` as an ESPresense node publishes it: its ids, its field names.
    public static let espresense = CompatibilityOutput(key: "espresense") { r, room in
        // A packet without a level (HCI's 127; the agent's reading says -127 and `unknown`):
        // ESPresense sends the packet's level, and a node of its never reports without one.
        if r.rssi == -127 && r.proximity == .unknown { return nil }
        let id = espresenseID(r.id)
        return try? OutboundMessage(topic: Topics.Compatibility.espresenseDevice(id, room: room), json: ESPresense(
            id: id, name: r.name, rssiAt1m: r.power, rssi: r.rssi, raw: rounded(r.distance),
            distance: rounded(r.distance), mac: r.mac.replacingOccurrences(of: ":", with: ""),
            interval: r.interval.map { Int(($0 * 1000).rounded()) }, roomcastNode: r.node))
    }

    /// ESPresense's spelling of an id: `iBeacon:<uuid>-<major>-<minor>`, `altBeacon:…`,
    /// `eddy:<namespace>-<instance>` and a device listed by its address as the bare address
    /// (`f155906529dc`). Topics are matched case-sensitively, so an `mqtt_room` sensor or an
    /// ESPresense-companion setup written for ESPresense nodes hears a Roomcast node only under
    /// these. Other ids (a phone's `irk:<name>`, `fp:`) have no ESPresense form Roomcast could
    /// give (ESPresense names a phone by its key, or the alias given it) and go as they are.
    static func espresenseID(_ id: BeaconID) -> String {
        let body = id.rawValue.dropFirst(id.scheme.count + 1)
        switch id.scheme {
        case "ibeacon": return "iBeacon:" + body
        case "altbeacon": return "altBeacon:" + body
        case "eddystone": return "eddy:" + body
        case "mac": return String(body)
        default: return id.rawValue
        }
    }

    /// Every output, in the order their messages are published.
    public static let all: [CompatibilityOutput] = [.mqttRoom, .espresense]

    private static func rounded(_ x: Double) -> Double { (x * 100).rounded() / 100 }

    /// `espresense/devices/<id>/<room>` in ESPresense's field names.
    struct ESPresense: Encodable {
        var id: String
        var name: String?
        var rssiAt1m: Int
        /// The newest packet's level, as ESPresense sends it (not the filtered one).
        var rssi: Int
        /// ESPresense's unfiltered distance; Roomcast ranges once, from the filtered level.
        var raw: Double
        var distance: Double
        var mac: String
        /// The mean advertising interval (ms), under ESPresense's name for it.
        var interval: Int?
        /// This node: an aggregator reading ESPresense topics skips the message, whose reading
        /// it has from the node's own topic. ESPresense's tools ignore fields they do not know.
        var roomcastNode: String

        enum CodingKeys: String, CodingKey {
            case id, name, rssi, raw, distance, mac
            case interval = "int"
            case rssiAt1m = "rssi@1m"
            case roomcastNode = "roomcast_node"
        }
    }
}
