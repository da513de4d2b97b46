import Foundation
import RoomcastFusion
import RoomcastLogging
import Shared
import Testing
@testable import RoomcastAggregator

/// A site that lists no nodes, where fusion makes a room of each node it hears (`auto_nodes`):
/// Home Assistant gets each node's device and its room's, as a listed node's and room's, and
/// keeps them across a restart while the broker holds the node's status.
@Suite struct MadeNodeDevicesTests {
    static let cat = BeaconID("ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0-1-1")!
    static let topics = Topics()

    static func reading(_ node: String, at t: Double) -> BeaconReading {
        BeaconReading(id: cat, node: node, ts: t, seq: UInt64(t * 2), rssi: -50, rssiFiltered: -50, power: -59,
                      distance: 1, proximity: .near, kind: .iBeacon, mac: "aa:bb:cc:dd:ee:ff")
    }

    static func topicsOf(_ node: String) throws -> [String] {
        try HomeAssistantDiscovery(topics: topics).madeNodeConfigs(node).map(\.topic)
    }

    /// The first reading fusion takes from a node makes its room, and announces the node's device
    /// and the room's, once; the room's occupancy goes out with every refresh from then on, after
    /// its beacon has left it too; an instance that becomes active again publishes them with its
    /// start. A node heard on a site that lists its nodes makes nothing.
    @Test func aNodeFirstHeardBringsItsDeviceAndItsRoomsOnce() throws {
        var core = AggregatorConfig(site: SiteModel()).makeCore()
        let devices = try Self.topicsOf("study-pi")
        #expect(devices.count == 2, "the node's device and its room's: \(devices)")
        #expect(try core.start(now: 0).allSatisfy { !devices.contains($0.topic) }, "not heard yet")
        var announced: [OutboundMessage] = []
        for t in stride(from: 1.0, through: 10, by: 0.5) {
            announced += try core.handle(topic: Self.topics.nodeBeacon("study-pi", Self.cat),
                                         payload: WireFormat.encode(Self.reading("study-pi", at: t)), now: t).messages
            announced += try core.advance(to: t)
        }
        #expect(announced.filter { devices.contains($0.topic) }.map(\.topic).sorted() == devices.sorted(), "each once")
        let room = try #require(announced.first { $0.topic.hasSuffix("roomcast_room_study_pi/config") })
        #expect(String(decoding: room.payload, as: UTF8.self).contains(#""name":"Study Pi""#))
        #expect(core.engine.decision(for: Self.cat)?.room == "study-pi")
        #expect(try core.startConfigs().filter { devices.contains($0.topic) }.count == 2, "a take-over publishes them again")

        // Away: the room is empty, and its occupancy still goes out with the refresh.
        var later: [OutboundMessage] = []
        for t in stride(from: 10.5, through: 60, by: 0.5) { later += try core.advance(to: t) }
        #expect(core.engine.decision(for: Self.cat)?.room == nil, "away")
        let occupancy = try #require(try core.refresh(now: 61).last { $0.topic == Self.topics.room("study-pi") })
        #expect(try WireFormat.decode(RoomOccupancy.self, from: occupancy.payload).count == 0)

        let site = SiteModel(rooms: [.init(name: "study")], nodes: [.init(name: "study-pi", room: "study")])
        var listed = AggregatorConfig(site: site).makeCore()
        _ = try listed.start(now: 0)
        let heard = try listed.handle(topic: Self.topics.nodeBeacon("study-pi", Self.cat),
                                      payload: WireFormat.encode(Self.reading("study-pi", at: 1)), now: 1).messages
        #expect(!heard.contains { $0.topic.contains("roomcast_room_study_pi") }, "a listed node's room is the config's")
        #expect(listed.announcedNodes.isEmpty)
    }

    /// Two nodes whose names give one Home Assistant id (`hall-pi`, `hall_pi`) would share one
    /// config, each overwriting the other's: the second gets none. Fusion still makes its room.
    @Test func aNodeWhoseIdsAreAnothersGetsNoDevices() throws {
        var core = AggregatorConfig(site: SiteModel()).makeCore()
        _ = try core.start(now: 0)
        var out: [OutboundMessage] = []
        for (k, node) in ["hall-pi", "hall_pi"].enumerated() {
            out += try core.handle(topic: Self.topics.nodeStatus(node), payload: Array("online".utf8), now: Double(k)).messages
        }
        #expect(out.filter { $0.topic.hasPrefix("homeassistant/") }.map(\.topic).sorted() == (try Self.topicsOf("hall-pi")).sorted())
        #expect(core.announcedNodes == ["hall-pi"])
        #expect(core.engine.madeNode("hall_pi"))
    }

    /// Through the runtime, after a restart: the broker sends the retained statuses and the
    /// devices' configs. A node that says `online` is announced again; one that says `offline`
    /// (down across the restart) keeps its devices without being announced; one whose status
    /// was cleared (a Pi taken away) loses its devices in the clean-up.
    @Test func aRestartKeepsTheDevicesOfEveryNodeTheBrokerStillHasAStatusOf() async throws {
        let core = AggregatorConfig(site: SiteModel()).makeCore()
        let discovery = try #require(core.discovery)
        let runtime = AggregatorRuntime(core: core, election: nil, refreshInterval: .infinity, startedAt: 0, logger: .silent)
        await runtime.brokerConnected(now: 0)
        for node in ["hall-pi", "attic-pi", "garage-pi"] {
            for config in try discovery.madeNodeConfigs(node) {
                _ = await runtime.handle(topic: config.topic, payload: config.payload, now: 0, retained: true)
            }
        }
        _ = await runtime.handle(topic: Self.topics.nodeStatus("hall-pi"), payload: Array("online".utf8), now: 0, retained: true)
        _ = await runtime.handle(topic: Self.topics.nodeStatus("attic-pi"), payload: Array("offline".utf8), now: 0, retained: true)
        var out: [OutboundMessage] = []
        for t in stride(from: 0.5, through: 60, by: 0.5) { out += await runtime.tick(now: t) }
        let emptied = Set(out.filter { $0.payload.isEmpty }.map(\.topic))
        #expect(emptied == Set(try Self.topicsOf("garage-pi")), "only the node without a status loses its devices")
        let written = Set(out.filter { !$0.payload.isEmpty }.map(\.topic))
        #expect(written.isSuperset(of: try Self.topicsOf("hall-pi")), "the online node is announced again")
        #expect(written.isDisjoint(with: try Self.topicsOf("attic-pi")), "the offline one is kept, not announced")
        #expect(out.contains { $0.topic == Self.topics.room("hall-pi") }, "the online node's room's occupancy")
    }
}
