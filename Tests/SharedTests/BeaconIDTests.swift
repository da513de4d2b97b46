import Foundation
import Testing
@testable import Shared

@Suite struct BeaconIDTests {
    @Test func majorAndMinorStaySeparate() {
        let uuid = UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!
        let a = BeaconID.iBeacon(uuid: uuid, major: 675, minor: 23)
        let b = BeaconID.iBeacon(uuid: uuid, major: 67, minor: 523)
        #expect(a != b)
        #expect(a.rawValue == "ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0-675-23")
        #expect(b.rawValue == "ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0-67-523")
    }

    @Test(arguments: [
        "ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0-0-65535",
        "eddystone:edd1ebeac04e5defa017-0bdb87539b67",
        "altbeacon:2f234454-cf6d-4a0f-adf2-f4911ba9ffa6-1-2",
        "mac:a4c138aabbcc",
        "irk:alice-phone",
        "fp:tile-feed",
    ])
    func validIDsRoundTrip(_ text: String) throws {
        let id = try #require(BeaconID(text))
        #expect(id.rawValue == text)
        let json = try WireFormat.encode([id])
        #expect(try JSONDecoder().decode([BeaconID].self, from: Data(json)) == [id])
    }

    @Test(arguments: [
        "", "ibeacon:", "IBEACON:x", "ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0-65536-1",
        "ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0-01-1", "mac:a4c138aabb", "mac:zzzzzzzzzzzz",
        "irk:a/b", "irk:a+b", "irk:a#b", "unknown:x", "irk:Upper",
        // Shapes no advertisement gives, which a known beacon listed so would never match:
        "eddystone:edd1ebeac04e5defa0170bdb87539b67", "eddystone:edd1ebeac04e5defa017-0bdb87539b6",
        "altbeacon:2f234454cf6d4a0fadf2f4911ba9ffa6-1-2", "altbeacon:0102-1-2", "mac:aa-bb-cc-dd-", "mac:a4c138aabbcc-",
        "ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096eg-1-2",
    ])
    func invalidIDsAreRejected(_ text: String) {
        #expect(BeaconID(text) == nil)
    }
}

@Suite struct TopicsTests {
    let topics = Topics()
    let id = BeaconID("ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0-1-2")!

    @Test func buildsAndParsesEveryTopic() {
        let cases: [(String, Topics.Topic)] = [
            (topics.nodeStatus("kitchen-pi"), .nodeStatus(node: "kitchen-pi")),
            (topics.nodeTelemetry("kitchen-pi"), .nodeTelemetry(node: "kitchen-pi")),
            (topics.nodeBeacon("kitchen-pi", id), .nodeBeacon(node: "kitchen-pi", id: id)),
            (topics.nodeEvents("kitchen-pi"), .nodeEvents(node: "kitchen-pi")),
            (topics.presence(id), .presence(id: id)),
            (topics.room("kitchen"), .room("kitchen")),
            (topics.events, .events),
            (topics.aggregatorStatus, .aggregatorStatus),
        ]
        for (topic, expected) in cases {
            #expect(topics.parse(topic) == expected, "\(topic)")
        }
        #expect(topics.nodeBeacon("n", id) == "roomcast/nodes/n/beacons/\(id.rawValue)")
    }

    @Test func customPrefixWithSeveralLevels() {
        let t = Topics(prefix: "site/a")
        #expect(t.parse("site/a/presence/\(id.rawValue)") == .presence(id: id))
        #expect(t.parse("roomcast/presence/\(id.rawValue)") == nil)
    }

    @Test(arguments: ["roomcast/nodes//status", "roomcast/nodes/a/beacons/not-an-id", "roomcast", "other/x", "roomcast/nodes/a/b/c/d"])
    func rejectsForeignTopics(_ topic: String) {
        #expect(topics.parse(topic) == nil)
    }

    @Test func topicNameRules() {
        #expect(TopicName.problem(with: "kitchen") == nil)
        #expect(TopicName.problem(with: "") != nil)
        #expect(TopicName.problem(with: "a/b") != nil)
        #expect(TopicName.problem(with: "a+") != nil)
        #expect(TopicName.problem(with: "#") != nil)
        // What libmosquitto refuses in a topic (MALFORMED_UTF8): C1 controls, noncharacters.
        for refused in [0x85, 0x9B, 0xFDD0, 0xFFFE, 0x1FFFF, 0x2028].map({ "a" + String(Character(Unicode.Scalar(UInt32($0))!)) }) {
            #expect(TopicName.problem(with: refused) != nil, "\(refused.unicodeScalars.map(\.value))")
        }
        #expect(TopicName.problem(with: "Küche 客厅 🛋") == nil)
        #expect(TopicName.problem(with: "a\0b") != nil)
    }
}

@Suite struct ByteReaderTests {
    @Test func readsLittleAndBigEndian() throws {
        var r = ByteReader([0x01, 0x02, 0x03, 0x04, 0x05, 0x06])
        #expect(try r.readUInt16LE() == 0x0201)
        #expect(try r.readUInt16BE() == 0x0304)
        #expect(r.remaining == 2)
        #expect(throws: ByteReaderError.self) { try r.readUInt32LE() }
        #expect(try r.readBytes(2) == [0x05, 0x06])
        #expect(r.isAtEnd)
    }

    @Test func subReaderIsBounded() throws {
        var r = ByteReader([1, 2, 3, 4])
        var sub = try r.subReader(2)
        #expect(try sub.readUInt8() == 1)
        #expect(try sub.readUInt8() == 2)
        #expect(throws: ByteReaderError.self) { try sub.readUInt8() }
        #expect(try r.readUInt8() == 3)
    }

    @Test func hexRoundTrip() {
        #expect(Hex.encode([0xde, 0xad, 0x01]) == "dead01")
        #expect(Hex.decode("DE:AD 01") == [0xde, 0xad, 0x01])
        #expect(Hex.decode("abc") == nil)
        #expect(Hex.decode("zz") == nil)
    }

    @Test(arguments: [UInt64(0), 0xC9_50_46_A8_8C_C7, 0xFFFF_FFFF_FFFF, 0x0A_0B_0C_0D_0E_0F, 0x1_0000_0000_0001])
    func addressIsColonSeparatedBytes(value: UInt64) {
        let bytes = (0..<6).map { UInt8(truncatingIfNeeded: value >> (40 - 8 * $0)) }
        #expect(Hex.address(value) == Hex.colonSeparated(bytes))
    }
}

@Suite struct WireFormatTests {
    @Test func presenceEncodesNullRoomExplicitly() throws {
        let id = BeaconID("mac:a4c138aabbcc")!
        let d = PresenceDecision(id: id, name: nil, room: nil, floor: nil, distance: nil, confidence: 0.9,
                                 node: nil, since: 10, lastSeen: 5, evidence: [], ts: 12)
        let text = String(decoding: try WireFormat.encode(d), as: UTF8.self)
        #expect(text.contains("\"room\":null"))
        let back = try WireFormat.decode(PresenceDecision.self, from: Array(text.utf8))
        #expect(back == d)
    }

    @Test func rejectsUnknownVersionAndJunk() {
        #expect(throws: WireFormatError.unsupportedVersion(2)) {
            try WireFormat.decode(RoomOccupancy.self, from: Array(#"{"v":2}"#.utf8))
        }
        #expect(throws: WireFormatError.self) {
            try WireFormat.decode(RoomOccupancy.self, from: [0xff, 0xfe])
        }
        #expect(throws: WireFormatError.tooLarge(WireFormat.maxPayloadBytes + 1)) {
            try WireFormat.decode(RoomOccupancy.self, from: [UInt8](repeating: 0x20, count: WireFormat.maxPayloadBytes + 1))
        }
    }
}

@Suite struct MessageLogLineTests {
    @Test func roundTripsJSONAndTextPayloads() throws {
        let json = MessageLogLine(ts: 1700000000.123, topic: "roomcast/x", payload: Array(#"{"a":1,"b":"c/d"}"#.utf8), retain: true)
        let text = json.encoded()
        #expect(text == #"{"payload":{"a":1,"b":"c/d"},"retain":true,"topic":"roomcast/x","ts":1700000000.123}"#)
        #expect(try MessageLogLine.decode(text) == json)

        let plain = MessageLogLine(ts: 5, topic: "roomcast/nodes/a/status", payload: Array("offline".utf8))
        #expect(plain.encoded() == #"{"payload":"offline","retain":false,"topic":"roomcast/nodes/a/status","ts":5}"#)
        #expect(try MessageLogLine.decode(plain.encoded()) == plain)
    }

    @Test func rejectsBrokenLines() {
        #expect(throws: WireFormatError.self) { try MessageLogLine.decode("nope") }
        #expect(throws: WireFormatError.self) { try MessageLogLine.decode(#"{"topic":"a"}"#) }
        #expect(throws: WireFormatError.self) { try MessageLogLine.decode(#"{"ts":1}"#) }
    }

    /// A hand-written id that is not one says what to mend: the usual mistakes are capitals
    /// (copied from a phone app or an `advertise.uuid`), a UUID without its dashes, and a major
    /// or minor out of range.
    @Test func aWrongIdSaysWhatToMend() {
        let uuid = "e2c56db5-dffb-48d2-b060-d0f5a71096e0"
        #expect(BeaconID.problem(with: "ibeacon:\(uuid)-1-2") == nil)
        #expect(BeaconID.problem(with: "ibeacon:\(uuid.uppercased())-1-2")
                == "'ibeacon:\(uuid.uppercased())-1-2' has capitals: beacon ids are lowercase ('ibeacon:\(uuid)-1-2')")
        #expect(BeaconID.problem(with: "ibeacon:\(uuid.replacingOccurrences(of: "-", with: ""))-1-2")
                == "'ibeacon:\(uuid.replacingOccurrences(of: "-", with: ""))-1-2' needs its UUID's dashes: 'ibeacon:\(uuid)-1-2'")
        #expect(BeaconID.problem(with: "ibeacon:\(uuid)-70000-2") == "'ibeacon:\(uuid)-70000-2': its major 70000 is outside 0…65535")
        #expect(BeaconID.problem(with: "ibeacon:\(uuid)-1-02") == "'ibeacon:\(uuid)-1-02': its minor is written '2', without leading zeros")
        #expect(BeaconID.problem(with: "ibeacon:\(uuid)-1-x") == "'ibeacon:\(uuid)-1-x': its minor 'x' is not a whole number")
        #expect(BeaconID.problem(with: "mac:aa:bb:cc:dd:ee:ff") == "'mac:aa:bb:cc:dd:ee:ff' is not a beacon id: mac:<12 hex digits, no colons>")
        #expect(BeaconID.problem(with: "cat")?.hasPrefix("'cat' is not a beacon id (forms: ibeacon:<uuid>-<major>-<minor>") == true)
        // Shown in a log: printable only, and cut.
        let hostile = "ibeacon:\u{1B}[2J" + String(repeating: "a", count: 500)
        let said = BeaconID.problem(with: hostile) ?? ""
        #expect(!said.contains("\u{1B}") && said.count < 400, "\(said)")
    }
}
