import Foundation
import Testing
import Shared
import RoomcastFusion
@testable import RoomcastAggregator

/// An agent whose `node` differs from the aggregator's `nodes:` in case only (`Kitchen-Pi`,
/// `kitchen-pi`) is refused with the name it most likely means: told to list a node it believes
/// listed, the user would look in the wrong place.
@Suite struct UnknownNodeTests {
    @Test func aNodeNameDifferentInCaseIsPointedToTheListedOne() {
        var intake = InputIntake(topics: Topics(), knownNodes: ["kitchen-pi", "office-pi"])
        guard case .failure(let why) = intake.accept(topic: Topics().nodeStatus("Kitchen-Pi"), payload: Array("online".utf8)) else {
            Issue.record("accepted")
            return
        }
        #expect(why.reason == .unknownNode)
        #expect(why.message == "node 'Kitchen-Pi' is not among this aggregator's nodes; did you mean 'kitchen-pi'? (node names are matched exactly, case too)")
        guard case .failure(let far) = intake.accept(topic: Topics().nodeStatus("garage-esp32"), payload: Array("online".utf8)) else { return }
        #expect(far.message.contains("list it under nodes:"))
    }

    /// On a site that lists no nodes each node stands for a room of its name: one named
    /// `not_home` would be a room whose topic reads as away. It is refused, saying why, as a
    /// reading, a status or a heartbeat; any other name still makes its room.
    @Test func aNodeNamedAsAwayMakesNoRoom() throws {
        let topics = Topics()
        var core = AggregatorCore(engine: FusionEngine(site: SiteModel()), site: SiteModel(), topics: topics, discovery: nil)
        _ = try core.start(now: 100)
        let cat = BeaconID("ibeacon:e06f95e4-fcfc-42c6-b4f8-f6bae87ea1a0-1233-45")!
        for (k, node) in ["not_home", "hall-pi"].enumerated() {
            let reading = LiveRig.reading(cat, node: node, rssi: -60, seq: UInt64(k + 1))
            let (_, why) = try core.handle(topic: topics.nodeBeacon(node, cat), payload: WireFormat.encode(reading), now: 101)
            if node == "not_home" {
                #expect(why?.reason == .unknownNode && why?.message.contains("reads as away: rename the node") == true, "\(String(describing: why))")
            } else {
                #expect(why == nil)
            }
        }
        for topic in [topics.nodeStatus("not_home"), topics.nodeHeartbeat("not_home")] {
            let (_, why) = try core.handle(topic: topic, payload: Array("online".utf8), now: 102)
            #expect(why?.reason == .unknownNode, "\(topic)")
        }
        // Heard over its initial wait by both: placed in the hall, as no room named away exists.
        var out: [OutboundMessage] = []
        for step in 0..<10 {
            let t = 103 + Double(step) * 0.5
            for node in ["not_home", "hall-pi"] {
                var reading = LiveRig.reading(cat, node: node, rssi: node == "hall-pi" ? -75 : -50, seq: UInt64(10 + step))
                reading.ts = t
                out += try core.handle(topic: topics.nodeBeacon(node, cat), payload: WireFormat.encode(reading), now: t).messages
            }
        }
        out += try core.advance(to: 110)
        #expect(core.engine.decision(for: cat)?.room == "hall-pi")
        // The room made of the node is on floor 0 on its room topic, as on the beacon's presence.
        let occupancy = try #require(out.last { $0.topic == topics.room("hall-pi") })
        #expect(String(decoding: occupancy.payload, as: UTF8.self).contains(#""floor":0"#))
        #expect(core.engine.decision(for: cat)?.floor == 0)
        #expect(core.intake.isKnown(node: "hall-pi") && !core.intake.isKnown(node: "not_home"))

        // A retained decision in a room of that name (left by a node so named) is not resumed:
        // on this site the engine would make the room again.
        let dog = BeaconID("ibeacon:e06f95e4-fcfc-42c6-b4f8-f6bae87ea1a0-1233-46")!
        var fresh = AggregatorCore(engine: FusionEngine(site: SiteModel()), site: SiteModel(), topics: topics, discovery: nil)
        _ = try fresh.start(now: 200)
        let retained = PresenceDecision(id: dog, name: nil, room: "not_home", floor: 0, distance: 1, confidence: 1,
                                        node: "not_home", since: 150, lastSeen: 199, evidence: [], ts: 199)
        _ = try fresh.handle(topic: topics.presence(dog), payload: WireFormat.encode(retained), now: 200)
        #expect(fresh.engine.decision(for: dog) == nil)
    }
}
