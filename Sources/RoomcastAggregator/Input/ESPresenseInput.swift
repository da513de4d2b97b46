import Foundation
import Shared

/// Readings from ESPresense nodes (`espresense/devices/<id>/<room>`), so a fleet
/// of ESPresense and Roomcast nodes fuses together. The ESPresense node is
/// named by its room topic level; list it under `nodes:` with that name.
public struct ESPresenseInput: Sendable {
    /// The subscription filter.
    public static let filter = Topics.Compatibility.allESPresenseDevices

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
        let distance = p.distance ?? p.raw ?? 0
        guard distance.isFinite, distance >= 0, distance <= 1000 else { return reject(.outOfRange, "distance out of range") }
        let id = Self.beaconID(String(device.id))
        sequence += 1
        // Checked as a Double before converting: a value beyond Int, which any client on the
        // broker may send, would trap the conversion.
        let power = p.rssiAt1m.map { $0.rounded() }.flatMap { (-127...20).contains($0) ? Int($0) : nil } ?? -59
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

    /// ESPresense ids: `iBeacon:<uuid>-<major>-<minor>`, `altBeacon:…` and
    /// `eddy:<namespace>-<instance>` name what ours do and become ours; anything else a
    /// fingerprint id. Not `irk:`: ESPresense names a phone by its key's hex, Roomcast by the name
    /// the agent's config gives the key, so the two never meet, and an ESPresense `irk:<hex>`
    /// passed through would be a second id for one phone (and `mac:` is not ESPresense's form).
    static func beaconID(_ text: String) -> BeaconID {
        let lower = text.lowercased()
        if let id = BeaconID(lower), id.scheme == "ibeacon" || id.scheme == "altbeacon" { return id }
        if lower.hasPrefix("eddy:"), let id = BeaconID("eddystone:" + lower.dropFirst("eddy:".count)) { return id }
        var safe = ""
        for c in lower.unicodeScalars {
            switch c {
            case "a"..."z", "0"..."9", "-", "_", ".": safe.unicodeScalars.append(c)
            default: safe += "-"
            }
        }
        return BeaconID.fingerprint("espresense", String(safe.prefix(120))) ?? BeaconID("fp:espresense-unknown")!
    }

    static func macString(_ mac: String?) -> String {
        guard let mac, let bytes = Hex.decode(mac), bytes.count == 6 else { return "00:00:00:00:00:00" }
        return bytes.map { Hex.encode([$0]) }.joined(separator: ":")
    }
}

enum JSONDecoderBox {
    static let decoder = JSONDecoder()
}
