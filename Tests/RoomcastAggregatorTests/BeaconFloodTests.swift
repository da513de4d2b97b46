import Foundation
import RoomcastFusion
import Shared
import Testing
import TestSupport
@testable import RoomcastAggregator

/// A flood of fake beacon ids through one node, on a site with no `beacons:` list, through the
/// real aggregator core and fusion engine. The system must still do its job: a beacon heard all
/// along keeps its room, genuinely new ones get a presence (heard by the flooded node or by
/// another), and the broker is not left holding retained topics for ids that were never
/// beacons in a room — also after a restart.
@Suite struct BeaconFloodTests {
    static let topics = Topics()
    static let site = SiteModel(
        rooms: [.init(name: "kitchen"), .init(name: "office")],
        nodes: [.init(name: "kitchen-pi", room: "kitchen"), .init(name: "office-pi", room: "office")])
    static let capacity = 1000

    static func makeCore() -> AggregatorCore<FusionEngine> {
        var settings = FusionSettings()
        settings.maxBeacons = capacity
        settings.learnCalibration = false
        return AggregatorCore(engine: FusionEngine(site: site, settings: settings), site: site, topics: topics,
                              discovery: HomeAssistantDiscovery(topics: topics))
    }

    static func id(_ n: Int, major: UInt16 = 1) -> BeaconID {
        .iBeacon(uuid: UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!, major: major, minor: UInt16(n))
    }

    /// What a broker keeps of the core's output: the latest retained payload per topic.
    struct Broker {
        var retained: [String: [UInt8]] = [:]
        var sent = 0
        mutating func take(_ messages: [OutboundMessage]) {
            sent += messages.count
            for m in messages where m.retain {
                if m.payload.isEmpty { retained[m.topic] = nil } else { retained[m.topic] = m.payload }
            }
        }
    }

    static func feed(_ core: inout AggregatorCore<FusionEngine>, _ broker: inout Broker, _ id: BeaconID, node: String,
                     rssi: Int, at t: Double, seq: UInt64) throws {
        let r = BeaconReading(id: id, node: node, ts: t, seq: seq, rssi: rssi, rssiFiltered: Double(rssi), power: -59,
                              distance: 2, proximity: .near, kind: .iBeacon, mac: "aa:bb:cc:dd:ee:ff")
        broker.take(try core.handle(topic: topics.nodeBeacon(node, id), payload: WireFormat.encode(r), now: t).messages)
    }

    @Test func aFloodOfFakeIdsThroughOneNodeLocksNobodyOut() async throws {
        try await onHeavyWorkThread {
            var core = Self.makeCore()
            var broker = Broker()
            broker.take(try core.start(now: 0))
            let cat = Self.id(1, major: 7), dog = Self.id(2, major: 7), hamster = Self.id(3, major: 7)
            var seq: UInt64 = 0
            var t = 0.0
            // The cat is heard all along, loudest in the kitchen.
            func second() throws {
                seq += 1
                try Self.feed(&core, &broker, cat, node: "kitchen-pi", rssi: -55, at: t, seq: seq)
                try Self.feed(&core, &broker, cat, node: "office-pi", rssi: -75, at: t, seq: seq)
                broker.take(try core.advance(to: t))
            }
            while t < 10 { t += 1; try second() }
            #expect(core.engine.decision(for: cat)?.room == "kitchen")

            // 20 000 fake ids in 50 s through the office node, one advertisement each, 20 times the
            // table's size: a stranger lasts 2.5 s in it. 20 s in, the dog arrives in the office
            // (heard by the flooded node) and the hamster in the kitchen; both stay.
            let fakes = 20_000
            var placedAfter: [String: Double] = [:]
            var arrivals: UInt64 = 0
            for i in 0..<fakes {
                let at = 10 + Double(i) * 50 / Double(fakes)
                if at >= t + 1 {
                    t += 1
                    try second()
                    if t >= 30 {
                        arrivals += 1
                        try Self.feed(&core, &broker, dog, node: "office-pi", rssi: -55, at: t, seq: arrivals)
                        try Self.feed(&core, &broker, hamster, node: "kitchen-pi", rssi: -50, at: t, seq: arrivals)
                        for (name, id, room) in [("dog", dog, "office"), ("hamster", hamster, "kitchen")] where placedAfter[name] == nil {
                            if core.engine.decision(for: id)?.room == room { placedAfter[name] = t - 30 }
                        }
                    }
                }
                try Self.feed(&core, &broker, Self.id(i % 65_536, major: UInt16(2 + i / 65_536)), node: "office-pi", rssi: -80, at: at, seq: 1)
            }
            while t < 70 { t += 1; try second() }

            let dogAfter = try #require(placedAfter["dog"], "a new beacon heard by the flooded node gets a room during the flood")
            let hamsterAfter = try #require(placedAfter["hamster"], "a new beacon heard by another node gets a room during the flood")
            #expect(dogAfter <= 5 && hamsterAfter <= 5, "placed after \(placedAfter)")
            #expect(core.engine.decision(for: cat)?.room == "kitchen", "the cat kept its room through the flood")
            #expect(core.engine.trackedBeacons <= Self.capacity)
            #expect(core.engine.counters.evicted >= UInt64(fakes - Self.capacity))
            let presence = broker.retained.keys.filter { $0.hasPrefix("roomcast/presence/") && !$0.hasSuffix("/room") }
            #expect(Set(presence) == [Self.topics.presence(cat), Self.topics.presence(dog), Self.topics.presence(hamster)],
                    "retained presence: \(presence.count)")
            let fakeDiscovery = broker.retained.keys.filter { $0.hasPrefix("homeassistant/") && $0.contains("ibeacon") && !$0.contains("_7_") }
            #expect(fakeDiscovery.isEmpty, "discovery configs of fake ids: \(fakeDiscovery.prefix(3))")

            // A restart resumes from what the broker kept: the three animals, nothing else.
            var restarted = Self.makeCore()
            for (topic, payload) in broker.retained where topic.hasPrefix("roomcast/presence/") && !topic.hasSuffix("/room") {
                _ = try restarted.handle(topic: topic, payload: payload, now: 71)
            }
            #expect(restarted.engine.trackedBeacons == 3)
            print("fault id-flood: \(fakes) fake ids through one node at \(fakes / 50)/s; table \(core.engine.trackedBeacons)/\(Self.capacity), "
                  + "\(core.engine.counters.evicted) evicted, \(core.engine.counters.rejected(.capacity)) refused; new beacons placed after "
                  + "\(dogAfter) s (flooded node) and \(hamsterAfter) s (another node); retained presence topics left \(presence.count); "
                  + "messages sent \(broker.sent)")
        }
    }
}

extension BeaconFloodTests {
    /// A full table evicts a placed beacon silent for a few seconds to make room. It was still
    /// shown in its room: its presence, the room's occupancy and its person kept saying so until
    /// it was heard again, and then it entered with no leave before. It now goes away.
    @Test func aBeaconEvictedWhileShownInARoomGoesAway() throws {
        var settings = FusionSettings()
        settings.maxBeacons = 2
        settings.learnCalibration = false
        var core = AggregatorCore(engine: FusionEngine(site: Self.site, settings: settings), site: Self.site, topics: Self.topics,
                                  discovery: nil)
        var broker = Broker()
        broker.take(try core.start(now: 0))
        let cat = Self.id(1, major: 9), dog = Self.id(2, major: 9), owl = Self.id(3, major: 9)
        var t = 0.0, seq: UInt64 = 0
        var events: [String] = []
        func step(_ heard: [BeaconID]) throws {
            t += 0.5
            seq += 1
            var out: [OutboundMessage] = []
            for id in heard {
                var r = BeaconReading(id: id, node: "kitchen-pi", ts: t, seq: seq, rssi: -55, rssiFiltered: -55, power: -59,
                                      distance: 1, proximity: .near, kind: .iBeacon, mac: "aa:bb:cc:dd:ee:ff")
                if id == dog { r.name = "Dog" }
                out += try core.handle(topic: Self.topics.nodeBeacon("kitchen-pi", id), payload: WireFormat.encode(r), now: t).messages
            }
            out += try core.advance(to: t)
            events += out.filter { $0.topic == Self.topics.events }.map { String(decoding: $0.payload, as: UTF8.self) }
            broker.take(out)
        }
        while t < 10 { try step([cat, dog]) }
        #expect(core.engine.decision(for: dog)?.room == "kitchen")
        // The dog goes quiet; 6 s later the owl arrives and takes its place in the table.
        while t < 16 { try step([cat]) }
        while t < 20 { try step([cat, owl]) }
        #expect(core.engine.decision(for: dog) == nil, "the dog was evicted")
        let dogNow = try WireFormat.decode(PresenceDecision.self, from: try #require(broker.retained[Self.topics.presence(dog)]))
        #expect(dogNow.room == nil && dogNow.reason == AggregatorCore<FusionEngine>.evictedReason)
        // Its name and when it was last heard stay (its Last seen does not go unknown).
        #expect(dogNow.name == "Dog" && dogNow.lastSeen == 10, "\(dogNow)")
        let kitchen = try WireFormat.decode(RoomOccupancy.self, from: try #require(broker.retained[Self.topics.room("kitchen")]))
        #expect(!kitchen.beacons.contains(dog), "the kitchen still lists the dog: \(kitchen.beacons)")
        #expect(events.contains { $0.contains("\"leave\"") && $0.contains(dog.rawValue) }, "no leave for the dog: \(events)")
    }

    /// A hall of badges: 900 beacons in one room. Its occupancy listed every id twice, about
    /// 95 KiB: over the 64 KiB every Roomcast reader and a v5 broker take, so the room's topic
    /// would stop updating. The lists keep their first ids, the count stays exact, and the room
    /// still follows a beacon that leaves it.
    @Test func aCrowdedRoomsOccupancyStaysPublishable() async throws {
        try await onHeavyWorkThread {
            var core = Self.makeCore()
            var broker = Broker()
            broker.take(try core.start(now: 0))
            let crowd = (1...900).map { Self.id($0) }
            var seq: UInt64 = 0
            func second(_ t: Double, leaving: BeaconID? = nil) throws {
                for id in crowd {
                    seq += 1
                    let inKitchen = id != leaving
                    try Self.feed(&core, &broker, id, node: "kitchen-pi", rssi: inKitchen ? -50 : -85, at: t, seq: seq)
                    try Self.feed(&core, &broker, id, node: "office-pi", rssi: inKitchen ? -85 : -50, at: t + 0.5, seq: seq)
                }
            }
            for t in 1...15 { try second(Double(t)) }
            let payload = try #require(broker.retained[Self.topics.room("kitchen")])
            #expect(payload.count <= WireFormat.maxPayloadBytes, "\(payload.count) bytes")
            let kitchen = try WireFormat.decode(RoomOccupancy.self, from: payload)
            #expect(kitchen.count == 900 && kitchen.occupied, "count \(kitchen.count)")
            #expect(kitchen.truncated == true)
            #expect(kitchen.beacons.count > 300 && kitchen.beacons == Array(crowd.sorted().prefix(kitchen.beacons.count)),
                    "the first ids, sorted: \(kitchen.beacons.count)")
            #expect(kitchen.unassigned == kitchen.beacons, "nobody's beacons")

            let leaver = crowd[450]
            for t in 16...30 { try second(Double(t), leaving: leaver) }
            let after = try WireFormat.decode(RoomOccupancy.self, from: try #require(broker.retained[Self.topics.room("kitchen")]))
            #expect(after.count == 899, "the kitchen after one left: \(after.count)")
            let office = try WireFormat.decode(RoomOccupancy.self, from: try #require(broker.retained[Self.topics.room("office")]))
            #expect(office.beacons == [leaver] && office.truncated == nil, "\(office)")
        }
    }
}
