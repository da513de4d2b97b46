import Foundation
import Shared
import Testing
import TestSupport

/// The Swift encoders must produce exactly what docs/schema documents.
@Suite struct WireContractTests {
    let id = BeaconID("ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0-675-23")!

    func problems<T: Encodable>(_ value: T, _ schema: String) throws -> [String] {
        try JSONSchemaValidator.contract(schema).validate(json: WireFormat.encode(value))
    }

    @Test func readingMatchesSchema() throws {
        var r = BeaconReading(id: id, node: "kitchen-pi", ts: 1732880000.123, seq: 7, rssi: -68, rssiFiltered: -67.4,
                              power: -59, distance: 2.1, proximity: .near, kind: .iBeacon, mac: "c8:1f:66:0a:1b:2c")
        r.uuid = "e2c56db5-dffb-48d2-b060-d0f5a71096e0"; r.major = 675; r.minor = 23
        r.telemetry = BeaconTelemetry(batteryMillivolts: 3000, temperature: 21.5)
        r.rssiSD = 2.83
        #expect(try problems(r, "reading.schema.json") == [])
        #expect(String(decoding: try WireFormat.encode(r), as: UTF8.self).contains("\"rssi_sd\":2.83"))
        r.rssiSD = 0.001
        #expect(try problems(r, "reading.schema.json") != [], "no radio reads to a thousandth of a dB")
        r.rssiSD = 2.83
        r.mac = "C8-1F"
        #expect(try problems(r, "reading.schema.json") != [], "the validator must catch a bad mac")
    }

    @Test func presenceMatchesSchemaAwayAndHome() throws {
        var d = PresenceDecision(id: id, name: "Cat", room: "kitchen", floor: 0, distance: 1.8, confidence: 0.9,
                                 node: "kitchen-pi", since: 1, lastSeen: 2, evidence: [
                                    NodeEvidence(node: "kitchen-pi", room: "kitchen", rssi: -66, distance: 1.8, ts: 2)], ts: 3)
        #expect(try problems(d, "presence.schema.json") == [])
        d.room = nil; d.node = nil; d.distance = nil; d.floor = nil; d.evidence = []
        #expect(try problems(d, "presence.schema.json") == [])
    }

    @Test func otherPayloadsMatchSchemas() throws {
        #expect(try problems(RoomOccupancy(room: "kitchen", floor: 0, beacons: [id], ts: 1), "room.schema.json") == [])
        var cut = RoomOccupancy(room: "kitchen", floor: 0, beacons: [id], ts: 1)
        cut.truncated = true
        #expect(try problems(cut, "room.schema.json") == [])
        #expect(try problems(RoomEvent(ts: 1, event: .enter, id: id, name: "Cat", room: "kitchen", other: nil), "room-event.schema.json") == [])
        // Back from away: `other` is null, as the docs say, not a missing key.
        let back = try #require(try JSONSerialization.jsonObject(
            with: Data(WireFormat.encode(RoomEvent(ts: 1, event: .enter, id: id, name: nil, room: "kitchen", other: nil)))) as? [String: Any])
        #expect(back["other"] is NSNull && back["name"] == nil)
        #expect(try problems(RegionEvent(ts: 1, node: "n", region: "r", event: .exit, id: id), "region-event.schema.json") == [])
        #expect(try problems(NodeTelemetry(node: "n", ts: 1, version: "0.1.0", uptime: 5, adapter: "hci0", advertisementsPerSecond: 3,
                                           beaconsInView: 2, dropped: 0, hciErrors: 0, hciResets: 0, brokerReconnects: 1),
                             "telemetry.schema.json") == [])
        #expect(try problems(NodeHeartbeat(ts: 1_732_880_000.5), "heartbeat.schema.json") == [])
        // Decoded once, its version checked after (every node's, every second, at the aggregator):
        // another version or none is still said as such.
        #expect(NodeHeartbeat.self is any WireVersioned.Type && PersonPresence.self is any WireVersioned.Type
                && ReceiverCalibrationReport.self is any WireVersioned.Type)
        #expect(throws: WireFormatError.unsupportedVersion(2)) { try WireFormat.decode(NodeHeartbeat.self, from: Array(#"{"v":2,"ts":1}"#.utf8)) }
        #expect(throws: WireFormatError.unsupportedVersion(nil)) { try WireFormat.decode(NodeHeartbeat.self, from: Array(#"{"ts":1}"#.utf8)) }
        #expect(try WireFormat.decode(NodeHeartbeat.self, from: Array(#"{"v":1,"ts":1.5}"#.utf8)) == NodeHeartbeat(ts: 1.5))
        #expect(try JSONSchemaValidator.contract("heartbeat.schema.json").validate(json: Array(#"{"v":1}"#.utf8)) != [])
        let calibration = ReceiverCalibrationReport(ts: 1, nodes: [.init(node: "kitchen-pi", offsetDb: 2.5, source: .nodeBeacons),
                                                                   .init(node: "hall-pi", offsetDb: -0.4, source: .beacons)])
        #expect(try problems(calibration, "calibration.schema.json") == [])
        #expect(String(decoding: try WireFormat.encode(calibration), as: UTF8.self).contains("\"offset_db\":2.5"))
        #expect(try JSONSchemaValidator.contract("calibration.schema.json")
            .validate(json: Array(#"{"v":1,"ts":1,"nodes":[{"node":"a","offset_db":1,"source":5}]}"#.utf8)) != [])
        // Within v1 a payload may gain keys, and a room's people and unassigned came later
        // than its contract: a consumer validating with the schemas takes either.
        #expect(try JSONSchemaValidator.contract("room.schema.json")
            .validate(json: Array(#"{"beacons":[],"count":0,"floor":0,"occupied":false,"room":"kitchen","ts":1,"v":1}"#.utf8)) == [])
        let alice = PersonPresence(id: "alice", name: "Alice", state: .home, room: "kitchen", roomName: "Kitchen", floor: 0,
                                   confidence: 0.9, beacon: nil, reason: nil, since: 1, lastSeen: 1, ts: 1)
        var extended = try WireFormat.encode(alice)
        extended.removeLast()
        extended += Array(#","x_new":1}"#.utf8)
        #expect(try JSONSchemaValidator.contract("person.schema.json").validate(json: extended) == [])
        // A source a newer release names is valid within v1.
        #expect(try JSONSchemaValidator.contract("calibration.schema.json")
            .validate(json: Array(#"{"v":1,"ts":1,"nodes":[{"node":"a","offset_db":1,"source":"taught"}]}"#.utf8)) == [])
    }
}

@Suite struct FastJSONTests {
    @Test func fastEncodingDecodesToTheSameReadingAndMatchesTheSchema() throws {
        let id = BeaconID("ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0-675-23")!
        var r = BeaconReading(id: id, node: "kitchen \"pi\"\n", ts: 1732880000.123, seq: 1_767_225_600_040_001, rssi: -68,
                              rssiFiltered: -67.4, power: -59, distance: 2.0, proximity: .near, kind: .iBeacon, mac: "c8:1f:66:0a:1b:2c")
        var plain = r
        plain.node = "kitchen-pi"
        for var reading in [r, plain] {
            #expect(try WireFormat.decode(BeaconReading.self, from: reading.fastJSON()) == reading)
            reading.uuid = "e2c56db5-dffb-48d2-b060-d0f5a71096e0"; reading.major = 675; reading.minor = 23
            reading.name = "Cat"; reading.interval = 0.1; reading.samples = 3; reading.addressType = "random"; reading.txPower = -59
            reading.rssiSD = 2.05
            reading.telemetry = BeaconTelemetry(batteryMillivolts: 3000, temperature: 21.5)
            reading.namespace = "edd1ebeac04e5defa017"; reading.instance = "0bdb87539b67"; reading.url = "https://x.y/z"
            #expect(try WireFormat.decode(BeaconReading.self, from: reading.fastJSON()) == reading)
            if reading.node == "kitchen-pi" {
                #expect(try JSONSchemaValidator.contract("reading.schema.json").validate(json: reading.fastJSON()) == [])
            }
        }
        r.rssiFiltered = -70
        #expect(String(decoding: r.fastJSON(), as: UTF8.self).contains("\"rssi_filtered\":-70,"))
    }
}
