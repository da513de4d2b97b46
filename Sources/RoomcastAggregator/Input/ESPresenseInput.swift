import Foundation
import Shared

/// Readings from ESPresense nodes (`espresense/devices/<id>/<room>`), and their statuses
/// (`espresense/rooms/<room>/status`), so a fleet of ESPresense and Roomcast nodes fuses
/// together. The ESPresense node is named by its room topic level; list it under `nodes:` with
/// that name.
public struct ESPresenseInput: Sendable {
    /// The subscription filters.
    public static let filters = [Topics.Compatibility.allESPresenseDevices, Topics.Compatibility.allESPresenseStatuses]

    struct Payload: Decodable {
        var id: String?
        var name: String?
        var rssi: Double?
        var raw: Double?
        var distance: Double?
        var mac: String?
        /// The mean advertising interval (ms): ESPresense's `int`; `interval` from Roomcast agents
        /// before they wrote `int`.
        var int: Double?
        var interval: Double?
        var rssiAt1m: Double?
        /// Set by a Roomcast agent's ESPresense output: the node whose own topic carries the reading too.
        var roomcastNode: String?

        enum CodingKeys: String, CodingKey {
            case id, name, rssi, raw, distance, mac, int, interval
            case rssiAt1m = "rssi@1m"
            case roomcastNode = "roomcast_node"
        }
    }

    private var sequence: UInt64 = 0

    public init() {}

    /// The reading for one ESPresense message at `now` (ESPresense sends no capture time), or why not.
    public mutating func reading(topic: String, payload: [UInt8], now: Double) -> Result<BeaconReading, InputIntake.RejectionDetail> {
        func reject(_ r: InputIntake.Rejection, _ m: String) -> Result<BeaconReading, InputIntake.RejectionDetail> {
            .failure(.init(reason: r, message: m))
        }
        guard let device = Topics.Compatibility.parseESPresenseDevice(topic),
              !device.id.isEmpty, TopicName.problem(with: String(device.room)) == nil else {
            return reject(.foreignTopic, "not an ESPresense device topic")
        }
        guard payload.count <= WireFormat.maxPayloadBytes else { return reject(.tooLarge, "\(payload.count) bytes") }
        guard let p = try? JSONDecoderBox.decoder.decode(Payload.self, from: Data(payload)) else {
            return reject(.badPayload, "not an ESPresense JSON payload")
        }
        if let node = p.roomcastNode {
            return reject(.echo, "Roomcast node '\(node.prefix(64))' publishes this reading on its own topic too")
        }
        guard let rssi = p.rssi, rssi.isFinite, (-127...20).contains(rssi) else { return reject(.outOfRange, "rssi missing or out of range") }
        // Checked as a Double before converting: a value beyond Int, which any client on the
        // broker may send, would trap the conversion.
        let power = p.rssiAt1m.map { $0.rounded() }.flatMap { (-127...20).contains($0) ? Int($0) : nil } ?? -59
        // The firmware leaves `distance` out when it is not a number; read as 0 m, the reading would
        // be `immediate` and pull the beacon into that node's room. From the levels instead, as an
        // agent ranges with its default path-loss exponent (2.5).
        let distance = p.distance ?? p.raw ?? min(100, pow(10, (Double(power) - rssi) / 25))
        guard distance.isFinite, distance >= 0, distance <= 1000 else { return reject(.outOfRange, "distance out of range") }
        guard let id = Self.beaconID(String(device.id)) else {
            return reject(.notOneDevice, "'\(device.id.prefix(64))' names a kind of device, not one device")
        }
        sequence += 1
        var r = BeaconReading(id: id, node: String(device.room), ts: WireFormat.milliseconds(now), seq: sequence,
                              rssi: Int(rssi.rounded()), rssiFiltered: rssi, power: power,
                              distance: distance, proximity: distance < 0.5 ? .immediate : distance < 3 ? .near : .far,
                              kind: id.scheme == "ibeacon" ? .iBeacon : .device, mac: Self.macString(p.mac))
        // The name is whatever the device advertises, not a node's config: one with control
        // characters, or longer than a reading's name may be, is left out, and the reading kept.
        r.name = p.name.flatMap { InputIntake.nameProblem($0) == nil ? $0 : nil }
        r.powerIsNodesReference = true
        r.interval = (p.int ?? p.interval).flatMap { $0.isFinite && $0 > 0 && $0 < 3_600_000 ? $0 / 1000 : nil }
        return .success(r)
    }

    /// The status of the ESPresense node of `topic` (`espresense/rooms/<room>/status`: `online`,
    /// retained, or `offline`, its Last Will); nil for another topic.
    static func status(topic: String, payload: [UInt8]) -> Result<(node: String, online: Bool), InputIntake.RejectionDetail>? {
        guard let room = Topics.Compatibility.parseESPresenseStatus(topic) else { return nil }
        guard !room.isEmpty, TopicName.problem(with: String(room)) == nil else {
            return .failure(.init(reason: .foreignTopic, message: "not an ESPresense node's status topic"))
        }
        switch String(decoding: payload.prefix(16), as: UTF8.self) {
        case "online": return .success((String(room), true))
        case "offline", "": return .success((String(room), false))
        default: return .failure(.init(reason: .badPayload, message: "an ESPresense status is online or offline", node: String(room)))
        }
    }

    /// ESPresense ids that name a kind of device, shared by every device of the kind near a node:
    /// Exposure Notification and Apple's Nearby frames (`exp:`, `apple:`), a manufacturer's or
    /// service's data by length (`md:`, `sd:`, `ad:`), Microsoft's and Samsung's shared frames
    /// (`msft:`, `smarttag:`), and ESPresense nodes' own iBeacons (`node:`). Fused as one beacon,
    /// the readings of many devices in many rooms would place a phantom.
    static let kindPrefixes = ["exp:", "apple:", "md:", "sd:", "ad:", "msft:", "smarttag:", "node:"]

    /// ESPresense ids: `iBeacon:<uuid>-<major>-<minor>`, `altBeacon:…` and
    /// `eddy:<namespace>-<instance>` name what ours do and become ours; a bare MAC (a public or
    /// static address: `f155906529dc`) and `known:<mac>` become `mac:<mac>`, what a Roomcast agent
    /// gives a device listed by its address; an id of a kind of device (`kindPrefixes`) is nil;
    /// anything else a fingerprint id. Not `irk:`: ESPresense names a phone by its key's hex (or
    /// the alias given it), Roomcast by the name the agent's config gives the key, so the two
    /// never meet, and an ESPresense `irk:<hex>` passed through would be a second id for one phone.
    static func beaconID(_ text: String) -> BeaconID? {
        let lower = text.lowercased()
        if let id = BeaconID(lower), id.scheme == "ibeacon" || id.scheme == "altbeacon" { return id }
        if lower.hasPrefix("eddy:"), let id = BeaconID("eddystone:" + Self.eddystoneBody(lower.dropFirst("eddy:".count))) { return id }
        let address = lower.hasPrefix("known:") ? lower.dropFirst("known:".count) : Substring(lower)
        if address.count == 12, let bytes = Hex.decode(String(address)), bytes.count == 6 { return BeaconID.mac(bytes) }
        if kindPrefixes.contains(where: lower.hasPrefix) { return nil }
        var safe = ""
        for c in lower.unicodeScalars {
            switch c {
            case "a"..."z", "0"..."9", "-", "_", ".": safe.unicodeScalars.append(c)
            default: safe += "-"
            }
        }
        return BeaconID.fingerprint("espresense", String(safe.prefix(120))) ?? BeaconID("fp:espresense-unknown")!
    }

    /// `<namespace>-<instance>` of an ESPresense `eddy:` id. ESPresense's firmware writes the
    /// namespace's fifth byte twice (22 hex digits where there are 20): taken out, the id is the
    /// beacon's, as a Roomcast agent names it.
    static func eddystoneBody(_ body: Substring) -> String {
        let parts = body.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 2, parts[0].count == 22 else { return String(body) }
        let namespace = Array(parts[0])
        guard namespace[8] == namespace[10], namespace[9] == namespace[11] else { return String(body) }
        return String(namespace[0..<10] + namespace[12...]) + "-" + parts[1]
    }

    /// The address of a reading whose message gave none that reads as one.
    static let noAddress = "00:00:00:00:00:00"

    static func macString(_ mac: String?) -> String {
        guard let mac, let bytes = Hex.decode(mac), bytes.count == 6 else { return noAddress }
        return bytes.map { Hex.encode([$0]) }.joined(separator: ":")
    }
}

enum JSONDecoderBox {
    static let decoder = JSONDecoder()
}
