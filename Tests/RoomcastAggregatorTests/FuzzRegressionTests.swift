import Foundation
import RoomcastAggregator
import RoomcastFusion
import Shared
import Testing

/// Inputs on which the aggregator's fuzz harnesses (Sources/Fuzz) trapped, replayed through the
/// same decoder and checks. Each fixture is named for what it broke (Fixtures/README.md).
@Suite struct FuzzRegressionTests {
    static let directory = Bundle.module.resourceURL!.appendingPathComponent("Fixtures/fuzz")

    /// Every fixture, by harness; a fixture missing from the table would replay nothing.
    static let espresense = ["rssi-at-1m-beyond-int.bin"]
    static let intake = ["presence-room-with-slash.bin"]

    @Test func everyFixtureIsInTheTable() throws {
        for (harness, names) in [("espresense", Self.espresense), ("intake", Self.intake)] {
            let files = try FileManager.default.contentsOfDirectory(atPath: Self.directory.appendingPathComponent(harness).path)
            #expect(files.sorted() == names.sorted(), "\(harness)")
        }
    }

    /// As the `intake` harness: after the message, and the beacon then heard in another room,
    /// what the core publishes is on topics of the API. The first such input was a retained
    /// presence in a room named `kitc/roomlse`: resumed, it made the next change of room publish
    /// that room's occupancy on `roomcast/rooms/kitc/roomlse`. Such a room is now out of range.
    @Test(arguments: intake)
    func intakeInputPublishesOnlyOnTheAPIsTopics(_ name: String) throws {
        let bytes = try [UInt8](Data(contentsOf: Self.directory.appendingPathComponent("intake/\(name)")))
        let nul = try #require(bytes.firstIndex(of: 0))
        let topic = String(decoding: bytes[..<nul], as: UTF8.self)
        let topics = Topics()
        let site = SiteModel(rooms: [.init(name: "kitchen"), .init(name: "office")],
                             nodes: [.init(name: "kitchen-pi", room: "kitchen"), .init(name: "office-pi", room: "office")])
        var core = AggregatorCore(engine: FusionEngine(site: site), site: site, topics: topics, discovery: nil)
        let t = 1_732_880_000.0
        let (first, rejection) = try core.handle(topic: topic, payload: Array(bytes[(nul + 1)...]), now: t)
        #expect(rejection?.reason == .outOfRange && rejection?.message == "room name must not contain '/'", "\(String(describing: rejection))")
        var out = first
        let id = try #require(BeaconID("ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0-675-23"))
        for k in 0..<20 {
            let at = t + 0.5 * Double(k)
            for (node, rssi) in [("office-pi", -55.0), ("kitchen-pi", -75.0)] {
                let r = BeaconReading(id: id, node: node, ts: at, seq: UInt64(k + 1), rssi: Int(rssi), rssiFiltered: rssi, power: -59,
                                      distance: 1, proximity: .near, kind: .iBeacon, mac: "aa:bb:cc:dd:ee:ff")
                out += try core.handle(topic: topics.nodeBeacon(node, id), payload: WireFormat.encode(r), now: at).messages
            }
        }
        #expect(core.engine.decision(for: id)?.room == "office")
        #expect(out.contains { $0.topic == topics.room("office") })
        for m in out where m.topic != topics.presenceRoom(id) { #expect(topics.parse(m.topic) != nil, "published on \(m.topic)") }
    }

    /// As the `espresense` harness: a reading is within the intake's ranges and the intake
    /// accepts it unchanged on its own topic.
    @Test(arguments: espresense)
    func espresenseInputGivesAReadingTheIntakeAccepts(_ name: String) throws {
        let bytes = try [UInt8](Data(contentsOf: Self.directory.appendingPathComponent("espresense/\(name)")))
        let nul = try #require(bytes.firstIndex(of: 0))
        let topic = String(decoding: bytes[..<nul], as: UTF8.self)
        var input = ESPresenseInput()
        let reading = try input.reading(topic: topic, payload: Array(bytes[(nul + 1)...]), now: 1_732_880_000).get()
        #expect((-127...20).contains(reading.power))
        var intake = InputIntake(topics: Topics())
        let back = intake.accept(topic: Topics().nodeBeacon(reading.node, reading.id), payload: try WireFormat.encode(reading))
        // Whose power it is does not go on the wire.
        var onTheWire = reading
        onTheWire.powerIsNodesReference = false
        #expect(back == .success(.reading(onTheWire)))
    }

    /// The first crash: `rssi@1m` was converted to Int before its range check, so a value beyond
    /// Int trapped. Out of range it now falls back to the iBeacon default like any other bad value.
    @Test(arguments: [
        ("-5.3e88", -59), ("1e300", -59), ("-127.4", -127), ("-127.6", -59), ("20.4", 20), ("21", -59), ("-62.4", -62),
    ])
    func rssiAtOneMetreIsRangeCheckedBeforeConversion(_ value: String, _ power: Int) throws {
        var input = ESPresenseInput()
        let payload = Array(#"{"rssi":-65,"distance":2.1,"rssi@1m":\#(value)}"#.utf8)
        let reading = try input.reading(topic: "espresense/devices/c81f660a1b2c/kitchen-pi", payload: payload, now: 10).get()
        #expect(reading.power == power)
    }
}
