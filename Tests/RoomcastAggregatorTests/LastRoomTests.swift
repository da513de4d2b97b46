import Foundation
import RoomcastFusion
import Shared
import Testing
@testable import RoomcastAggregator

/// A beacon's `last_room`: where the keys were last, while they are away. Bermuda's "area last
/// seen" gives a Home Assistant user the same; without it, an away tag said only `not_home`.
@Suite struct LastRoomTests {
    static let topics = Topics()

    func presence(_ out: [OutboundMessage], _ id: BeaconID = cat) -> [PresenceDecision] {
        out.filter { $0.topic == Self.topics.presence(id) }.compactMap { try? WireFormat.decode(PresenceDecision.self, from: $0.payload) }
    }

    /// Through the real fusion engine: in the kitchen, `last_room` is the kitchen; gone, it stays
    /// the kitchen through every refresh and a restart that resumes from the broker's retained
    /// presence; heard in the office, it is the office.
    @Test func anAwayBeaconSaysWhereItWasLast() throws {
        var s = NodeLivenessTests.Site()
        _ = try s.core.start(now: 100)
        try s.run(from: 100, to: 130, heartbeats: true, catHeard: true)
        let placed = try #require(s.published.last?.decision)
        #expect(placed.room == "kitchen" && placed.lastRoom == "kitchen")
        try s.run(from: 130, to: 170, heartbeats: true, catHeard: false)
        let away = try #require(s.published.last)
        #expect(away.decision.room == nil && away.decision.reason == "timeout" && away.decision.lastRoom == "kitchen",
                "\(away.decision)")
        let refreshed = try #require(presence(try s.core.refresh(now: 171)).first)
        #expect(refreshed.room == nil && refreshed.lastRoom == "kitchen")
        #expect(try s.core.currentDecisions().map(s.core.publisher.withLastRoom).first?.lastRoom == "kitchen")

        // Restarted: the broker's retained presence is all there is of the cat.
        var restarted = NodeLivenessTests.Site()
        _ = try restarted.core.start(now: 200)
        _ = try restarted.core.handle(topic: Self.topics.presence(cat), payload: WireFormat.encode(away.decision), now: 200.2)
        try restarted.run(from: 201, to: 210, heartbeats: true, catHeard: false)
        let resumed = try #require(presence(try restarted.core.refresh(now: 211)).first)
        #expect(resumed.room == nil && resumed.lastRoom == "kitchen", "\(resumed)")

        // Heard in the office: the office.
        for t in stride(from: 211.0, to: 230, by: 1) {
            restarted.seq += 1
            let r = reading("office-pi", rssi: -55, ts: t, seq: restarted.seq)
            restarted.published += presence(try restarted.core.handle(topic: Self.topics.nodeBeacon("office-pi", cat),
                                                                       payload: WireFormat.encode(r), now: t).messages
                                             + restarted.core.advance(to: t + 0.5)).map { (t, $0) }
        }
        let back = try #require(restarted.published.last?.decision)
        #expect(back.room == "office" && back.lastRoom == "office", "\(back)")
    }

    /// The table is bounded by what is tracked: a stranger forgotten loses its last room with the
    /// rest; a listed beacon (or a person's), whose away presence is refreshed for good, keeps it.
    @Test func aForgottenStrangerLosesItsLastRoomAListedBeaconKeepsIt() throws {
        let stranger = BeaconID("ibeacon:e06f95e4-fcfc-42c6-b4f8-f6bae87ea1a0-7-7")!
        var p = PresencePublisher(topics: Self.topics, site: site)
        func decision(_ id: BeaconID, _ room: String?) -> PresenceDecision {
            PresenceDecision(id: id, name: nil, room: room, floor: nil, distance: nil, confidence: 0.9, node: nil,
                             since: 100, lastSeen: 100, evidence: [], ts: 100)
        }
        _ = try p.publish([decision(cat, "office"), decision(stranger, "kitchen")], now: 100)
        _ = try p.publish([decision(cat, nil), decision(stranger, nil)], now: 110)
        #expect(p.withLastRoom(decision(cat, nil)).lastRoom == "office")
        #expect(p.withLastRoom(decision(stranger, nil)).lastRoom == "kitchen")
        _ = p.forget(cat)
        _ = p.forget(stranger)
        #expect(presence(try p.refresh([decision(cat, nil)], now: 200)).first?.lastRoom == "office")
        #expect(presence(try p.refresh([decision(stranger, nil)], now: 200), stranger).first.map { $0.lastRoom == nil } == true)
    }
}

/// A person's `last_room` (and its display name): the room they were last worked out in.
@Suite struct PersonLastRoomTests {
    static let site = PeopleTrackerTests.site

    func decision(_ id: BeaconID, _ room: String?, ts: Double, reason: String? = nil) -> PresenceDecision {
        var d = PresenceDecision(id: id, name: nil, room: room, floor: nil, distance: nil, confidence: room == nil ? 0 : 0.9,
                                 node: nil, since: ts, lastSeen: ts, evidence: [], ts: ts)
        d.reason = reason
        return d
    }

    func alice(_ out: [OutboundMessage]) throws -> PersonPresence? {
        try out.last { $0.topic == "roomcast/people/alice" }.map { try WireFormat.decode(PersonPresence.self, from: $0.payload) }
    }

    /// In the study, then out with both beacons: her presence says she was last in the study,
    /// through a refresh and a restart that reads her presence back from the broker.
    @Test func aPersonAwaySaysWhereTheyWereLast() throws {
        var p = PresencePublisher(topics: Topics(), site: Self.site)
        let home = try #require(try alice(p.publish([decision(PeopleTrackerTests.tag, "office", ts: 10),
                                                     decision(PeopleTrackerTests.phone, "office", ts: 10)], now: 10)))
        #expect(home.lastRoom == "office" && home.lastRoomName == "Study")
        let gone = try #require(try alice(p.publish([decision(PeopleTrackerTests.tag, nil, ts: 50, reason: "timeout"),
                                                     decision(PeopleTrackerTests.phone, nil, ts: 50, reason: "timeout")], now: 50)))
        #expect(gone.state == .notHome && gone.lastRoom == "office" && gone.lastRoomName == "Study", "\(gone)")
        #expect(try alice(p.refresh([], now: 60))?.lastRoom == "office")

        // Restarted: her beacons' and her own retained presence are read back.
        var restarted = PresencePublisher(topics: Topics(), site: Self.site)
        restarted.resume(from: [decision(PeopleTrackerTests.tag, nil, ts: 50, reason: "timeout"),
                                decision(PeopleTrackerTests.phone, nil, ts: 50, reason: "timeout")])
        restarted.resumeRetained(gone, now: 100)
        let resumed = try #require(try alice(restarted.refresh([], now: 110)))
        #expect(resumed.state == .notHome && resumed.lastRoom == "office" && resumed.lastRoomName == "Study", "\(resumed)")
        // Back in the kitchen: the kitchen.
        let back = try #require(try alice(restarted.publish([decision(PeopleTrackerTests.phone, "kitchen", ts: 120)], now: 120)))
        #expect(back.room == "kitchen" && back.lastRoom == "kitchen" && back.lastRoomName == "Kitchen")
    }
}

/// Under `partition:` both partitions publish a beacon's away once neither has heard it since the
/// other's last word: they say the same `last_room`, the room it was placed in last (there, not
/// here).
@Suite struct PartitionLastRoomTests {
    @Test func bothPartitionsSayTheRoomItLeftFrom() throws {
        let topics = Topics()
        var downstairs = try AggregatorCoreTests.partitionThatHeardTheCat(floor: 0, at: "kitchen-pi")
        let upstairs = PresenceDecision(id: cat, name: "Cat", room: "bedroom", floor: 1, distance: 1, confidence: 0.9,
                                        node: "bedroom-pi", since: 112, lastSeen: 115, evidence: [], ts: 115.5)
        _ = try downstairs.otherPartitionsPresence(WireFormat.encode(upstairs), id: cat, now: 116)
        _ = try downstairs.advance(to: 145)
        var gone = PresenceDecision(id: cat, name: "Cat", room: nil, floor: nil, distance: nil, confidence: 0, node: nil,
                                    since: 148, lastSeen: 118, evidence: [], ts: 148)
        gone.reason = "timeout"
        gone.lastRoom = "bedroom"
        _ = try downstairs.otherPartitionsPresence(WireFormat.encode(gone), id: cat, now: 148.5)
        let refreshed = try downstairs.refresh(now: 150)
        let presence = try #require(refreshed.first { $0.topic == topics.presence(cat) }.map { try WireFormat.decode(PresenceDecision.self, from: $0.payload) },
                                    "downstairs publishes the away too")
        #expect(presence.room == nil && presence.lastRoom == "bedroom", "\(presence)")
        // Alice is upstairs' to publish: the cat was handed over, and nothing placed her here since.
        #expect(!refreshed.contains { $0.topic == topics.person("alice") })
    }

    /// Another partition's word stamped in the future (a Pi without a clock after a power cut, a
    /// forged message) is taken as of its arrival: a later word of that partition still counts.
    @Test func aWordFromTheFutureDoesNotHoldTheLastRoomForGood() throws {
        let topics = Topics()
        var downstairs = try AggregatorCoreTests.partitionThatHeardTheCat(floor: 0, at: "kitchen-pi")
        _ = try downstairs.advance(to: 145)
        func away(lastSeen: Double, lastRoom: String) throws -> [UInt8] {
            var d = PresenceDecision(id: cat, name: "Cat", room: nil, floor: nil, distance: nil, confidence: 0, node: nil,
                                     since: 140, lastSeen: lastSeen, evidence: [], ts: 140)
            d.reason = "timeout"
            d.lastRoom = lastRoom
            return try WireFormat.encode(d)
        }
        func lastRoom(at now: Double) throws -> String? {
            try downstairs.refresh(now: now).first { $0.topic == topics.presence(cat) }
                .map { try WireFormat.decode(PresenceDecision.self, from: $0.payload).lastRoom } ?? nil
        }
        #expect(try lastRoom(at: 146) == "kitchen")
        _ = try downstairs.otherPartitionsPresence(away(lastSeen: 2e9, lastRoom: "bedroom"), id: cat, now: 150)
        #expect(try lastRoom(at: 151) == "bedroom")
        _ = try downstairs.otherPartitionsPresence(away(lastSeen: 180, lastRoom: "kitchen"), id: cat, now: 185)
        #expect(try lastRoom(at: 186) == "kitchen", "the word from the future held")
    }

    /// On a site that lists no nodes (rooms made of the nodes heard), any room a node could be
    /// named after is one, but not the away word.
    @Test func aSiteOfMadeRoomsKeepsTheirLastRooms() throws {
        let topics = Topics()
        func resumed(_ lastRoom: String) throws -> String? {
            var core = AggregatorConfig(site: SiteModel(beacons: [.init(id: cat, name: "Cat")]), discovery: .init(enabled: false)).makeCore()
            _ = try core.start(now: 100)
            var retained = PresenceDecision(id: cat, name: "Cat", room: nil, floor: nil, distance: nil, confidence: 0, node: nil,
                                            since: 90, lastSeen: 80, evidence: [], ts: 90)
            retained.reason = "timeout"
            retained.lastRoom = lastRoom
            _ = try core.handle(topic: topics.presence(cat), payload: WireFormat.encode(retained), now: 100.2)
            return try core.refresh(now: 104).first { $0.topic == topics.presence(cat) }
                .map { try WireFormat.decode(PresenceDecision.self, from: $0.payload).lastRoom } ?? nil
        }
        #expect(try resumed("den-pi") == "den-pi")
        #expect(try resumed("not_home") == nil)
    }

    /// A `last_room` read back from the broker that the site does not have (a room taken out of
    /// the config, or anything written on the topic) is dropped, not shown for good.
    @Test func aLastRoomTheSiteLacksIsDropped() throws {
        let topics = Topics()
        var core = AggregatorConfig(site: site, discovery: .init(enabled: false)).makeCore()
        _ = try core.start(now: 100)
        var retained = PresenceDecision(id: cat, name: "Cat", room: nil, floor: nil, distance: nil, confidence: 0, node: nil,
                                        since: 90, lastSeen: 80, evidence: [], ts: 90)
        retained.reason = "timeout"
        retained.lastRoom = "conservatory"
        _ = try core.handle(topic: topics.presence(cat), payload: WireFormat.encode(retained), now: 100.2)
        let refreshed = try core.refresh(now: 104)
        let presence = try #require(refreshed.first { $0.topic == topics.presence(cat) }.map { try WireFormat.decode(PresenceDecision.self, from: $0.payload) })
        #expect(presence.room == nil && presence.lastRoom == nil, "\(presence)")
        retained.lastRoom = "office"
        var again = AggregatorConfig(site: site, discovery: .init(enabled: false)).makeCore()
        _ = try again.start(now: 100)
        _ = try again.handle(topic: topics.presence(cat), payload: WireFormat.encode(retained), now: 100.2)
        #expect(try again.refresh(now: 104).first { $0.topic == topics.presence(cat) }
            .map { try WireFormat.decode(PresenceDecision.self, from: $0.payload).lastRoom } == "office")
    }
}
