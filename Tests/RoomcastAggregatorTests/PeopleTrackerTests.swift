import Foundation
import RoomcastFusion
import Shared
import Testing
import TestSupport
@testable import RoomcastAggregator

/// People from their beacons' decisions, as the publisher puts them on MQTT.
@Suite struct PeopleTrackerTests {
    static let tag = BeaconID("ibeacon:e06f95e4-fcfc-42c6-b4f8-f6bae87ea1a0-7-1")!
    static let phone = BeaconID("ibeacon:e06f95e4-fcfc-42c6-b4f8-f6bae87ea1a0-7-2")!
    static let site = SiteModel(
        rooms: [.init(name: "kitchen"), .init(name: "office", floor: 1, displayName: "Study")],
        nodes: [.init(name: "kitchen-pi", room: "kitchen"), .init(name: "office-pi", room: "office")],
        beacons: [.init(id: cat, name: "Cat"), .init(id: tag), .init(id: phone)],
        people: [.init(name: "Alice", beacons: [tag, phone])])

    func decision(_ id: BeaconID, _ room: String?, confidence: Double = 0.9, lastSeen: Double, reason: String? = nil,
                  ts: Double) -> PresenceDecision {
        var d = PresenceDecision(id: id, name: nil, room: room, floor: nil, distance: nil, confidence: confidence, node: nil,
                                 since: ts, lastSeen: lastSeen, evidence: [], ts: ts)
        d.reason = reason
        return d
    }

    func person(in out: [OutboundMessage]) throws -> PersonPresence? {
        try out.last { $0.topic == "roomcast/people/alice" }.map { try WireFormat.decode(PersonPresence.self, from: $0.payload) }
    }

    func room(_ name: String, in out: [OutboundMessage]) throws -> RoomOccupancy? {
        try out.last { $0.topic == "roomcast/rooms/\(name)" }.map { try WireFormat.decode(RoomOccupancy.self, from: $0.payload) }
    }

    /// Alice's phone timed out before a restart; her tag has not been heard since the start
    /// (`never_heard`). She left when her phone did, for its reason: the tag says nothing of it.
    @Test func aBeaconNeverHeardDoesNotSayWhenOrWhyAPersonLeft() throws {
        var p = PresencePublisher(topics: Topics(), site: Self.site)
        p.resume(from: [decision(Self.phone, nil, confidence: 0, lastSeen: 90, reason: "timeout", ts: 100)])
        let out = try p.publish([decision(Self.tag, nil, confidence: 0, lastSeen: 0, reason: "never_heard", ts: 1000)], now: 1000)
        let alice = try #require(try person(in: out) ?? p.people.everyone(now: 1000).first)
        #expect(alice.state == .notHome && alice.reason == "timeout" && alice.since == 100, "\(alice)")
    }

    /// Alice's phone, away for `forget_after_s`, is forgotten by the engine; her tag was never
    /// heard. Worked out from the tag alone she read `never_heard`, with no `last_seen`.
    @Test func aForgottenAwayBeaconStillSaysWhenAndWhyItsPersonLeft() throws {
        var p = PresencePublisher(topics: Topics(), site: Self.site)
        _ = try p.publish([decision(Self.phone, nil, confidence: 0, lastSeen: 90, reason: "timeout", ts: 100),
                           decision(Self.tag, nil, confidence: 0, lastSeen: 0, reason: "never_heard", ts: 100)], now: 100)
        _ = p.forget(Self.phone)
        let out = try p.publish([decision(Self.tag, nil, confidence: 0, lastSeen: 0, reason: "never_heard", ts: 3700)], now: 3700)
        let alice = try #require(try person(in: out) ?? p.people.everyone(now: 3700).first)
        #expect(alice.state == .notHome && alice.reason == "timeout" && alice.lastSeen == 90, "\(alice)")
    }

    @Test func aPersonWithTwoBeaconsInARoomCountsOnceAndBeaconsOfNobodyApart() throws {
        var p = PresencePublisher(topics: Topics(), site: Self.site)
        let out = try p.publish([decision(Self.tag, "kitchen", lastSeen: 10, ts: 10), decision(Self.phone, "kitchen", lastSeen: 10, ts: 10),
                                 decision(cat, "kitchen", lastSeen: 10, ts: 10)], now: 10)
        let alice = try #require(try person(in: out))
        #expect(alice.state == .home && alice.room == "kitchen" && alice.roomName == "Kitchen" && alice.name == "Alice")
        let kitchen = try #require(try room("kitchen", in: out))
        #expect(kitchen.people == ["alice"] && kitchen.unassigned == [cat] && kitchen.count == 2 && kitchen.occupied)
        #expect(kitchen.beacons.count == 3)
        let schema = try JSONSchemaValidator.contract("person.schema.json")
        #expect(schema.validate(json: try #require(out.last { $0.topic == "roomcast/people/alice" }).payload) == [])
        #expect(try JSONSchemaValidator.contract("room.schema.json").validate(json: try WireFormat.encode(kitchen)) == [])
    }

    @Test func theMostRecentlyAndMostConfidentlyPlacedBeaconDecides() throws {
        var p = PresencePublisher(topics: Topics(), site: Self.site)
        // Both recent: the more confident one (the phone in the office) decides.
        var out = try p.publish([decision(Self.tag, "kitchen", confidence: 0.5, lastSeen: 100, ts: 100),
                                 decision(Self.phone, "office", confidence: 0.9, lastSeen: 99, ts: 100)], now: 100)
        #expect(try person(in: out)?.room == "office")
        #expect(try person(in: out)?.roomName == "Study" && (try person(in: out)?.beacon) == Self.phone)
        #expect(try room("kitchen", in: out)?.count == 0, "Alice's tag alone does not count her in the kitchen")
        #expect(try room("office", in: out)?.people == ["alice"])
        // The phone was last heard long before the tag: the tag decides, however confident the phone was.
        out = try p.publish([decision(Self.tag, "kitchen", confidence: 0.5, lastSeen: 200, ts: 200),
                             decision(Self.phone, "office", confidence: 1, lastSeen: 150, ts: 200)], now: 200)
        #expect(try person(in: out)?.room == "kitchen")
        #expect(try room("office", in: out)?.count == 0 && (try room("kitchen", in: out)?.people) == ["alice"])
    }

    @Test func theDecidingBeaconKeepsDecidingWithoutAClearLead() throws {
        var p = PresencePublisher(topics: Topics(), site: Self.site)
        _ = try p.publish([decision(Self.tag, "kitchen", confidence: 0.8, lastSeen: 10, ts: 10)], now: 10)
        #expect(p.people.current["alice"]?.room == "kitchen")
        // The phone in the office is a little more confident: no flip.
        var out = try p.publish([decision(Self.phone, "office", confidence: 0.85, lastSeen: 11, ts: 11)], now: 11)
        #expect(try person(in: out) == nil, "nothing changed for Alice")
        #expect(p.people.current["alice"]?.room == "kitchen")
        out = try p.publish([decision(Self.phone, "office", confidence: 0.95, lastSeen: 12, ts: 12)], now: 12)
        #expect(try person(in: out)?.room == "office")
        #expect(try person(in: out)?.since == 12)
    }

    /// A tag resting where it was put down (`sleeps_when_still`: keys on the hook) is not carried:
    /// it places its person only until another of theirs is heard after it fell silent. Alice
    /// leaving with her phone is not_home though her keys rest in the hall; with her phone at home,
    /// the phone places her.
    @Test func keysRestingOnTheHookDoNotKeepSomeoneWhoLeftAtHome() throws {
        var p = PresencePublisher(topics: Topics(), site: Self.site)
        _ = try p.publish([decision(Self.tag, "kitchen", lastSeen: 10, ts: 10), decision(Self.phone, "kitchen", lastSeen: 10, ts: 10)], now: 10)
        _ = try p.publish([decision(Self.tag, "kitchen", lastSeen: 10, reason: "resting", ts: 41)], now: 41)
        _ = try p.publish([decision(Self.phone, "office", lastSeen: 60, ts: 60)], now: 60)
        #expect(p.people.current["alice"]?.state == .home && p.people.current["alice"]?.room == "office")
        // She leaves with the phone; the keys rest on.
        let out = try p.publish([decision(Self.phone, nil, confidence: 0, lastSeen: 90, reason: "timeout", ts: 120)], now: 120)
        let alice = try #require(try person(in: out))
        #expect(alice.state == .notHome, "\(alice)")
        // Only the keys known (her phone never heard since): they place her.
        var keysOnly = PresencePublisher(topics: Topics(), site: Self.site)
        _ = try keysOnly.publish([decision(Self.tag, "kitchen", lastSeen: 10, reason: "resting", ts: 41)], now: 41)
        #expect(keysOnly.people.current["alice"]?.state == .home)
    }

    @Test func noEvidenceIsNotAwayAndAllAwayIsNotHome() throws {
        var p = PresencePublisher(topics: Topics(), site: Self.site)
        _ = try p.publish([decision(Self.tag, "kitchen", lastSeen: 10, ts: 10), decision(Self.phone, "kitchen", lastSeen: 10, ts: 10)], now: 10)
        // The kitchen's node goes offline: both beacons are held there without evidence.
        var out = try p.publish([decision(Self.tag, "kitchen", confidence: 0, lastSeen: 10, reason: "nodes_offline", ts: 20),
                                 decision(Self.phone, "kitchen", confidence: 0, lastSeen: 10, reason: "nodes_offline", ts: 20)], now: 20)
        var alice = try #require(try person(in: out))
        #expect(alice.state == .home && alice.room == "kitchen" && alice.reason == "nodes_offline" && alice.confidence == 0)
        #expect(try room("kitchen", in: out)?.people == ["alice"])
        // One away, one still held: still home.
        out = try p.publish([decision(Self.tag, nil, confidence: 0, lastSeen: 10, reason: "timeout", ts: 60)], now: 60)
        #expect(p.people.current["alice"]?.state == .home)
        // Both away: not_home, and out of the room's count.
        out = try p.publish([decision(Self.phone, nil, confidence: 0, lastSeen: 10, reason: "timeout", ts: 70)], now: 70)
        alice = try #require(try person(in: out))
        #expect(alice.state == .notHome && alice.room == nil && alice.beacon == nil && alice.since == 70)
        #expect(try room("kitchen", in: out)?.count == 0)
        let schema = try JSONSchemaValidator.contract("person.schema.json")
        #expect(schema.validate(json: try WireFormat.encode(alice)) == [])
    }

    @Test func aRestartResumesPeopleWithoutPublishingThem() throws {
        var p = PresencePublisher(topics: Topics(), site: Self.site)
        p.resume(from: [decision(Self.tag, "office", lastSeen: 10, ts: 10)])
        #expect(p.people.current["alice"]?.room == "office")
        let out = try p.publish([decision(Self.tag, "office", confidence: 0.8, lastSeen: 12, ts: 12)], now: 12)
        #expect(try person(in: out) == nil)
        let refreshed = try p.refresh([], now: 13)
        #expect(try person(in: refreshed)?.room == "office")
        #expect(try person(in: refreshed)?.ts == 13)
    }

    /// Alice has been in the kitchen since her tag arrived (50); her more confident phone came at
    /// 100 and decides. A restart worked her out afresh from the phone: in the kitchen since 100.
    /// What was published of her before the restart (her retained topic) keeps 50, in either
    /// order of the retained messages; read through the runtime, as the broker delivers them.
    /// A message on another person's topic naming her is not hers.
    @Test(arguments: [true, false])
    func aPersonsRetainedSinceSurvivesARestart(personFirst: Bool) async throws {
        let topics = Topics()
        let runtime = AggregatorRuntime(core: AggregatorConfig(site: Self.site, discovery: .init(enabled: false)).makeCore(),
                                        election: nil, refreshInterval: .infinity, startedAt: 200, logger: .silent)
        await runtime.brokerConnected(now: 200)
        var tag = decision(Self.tag, "kitchen", confidence: 0.5, lastSeen: 190, ts: 190)
        tag.since = 50
        var phone = decision(Self.phone, "kitchen", confidence: 0.9, lastSeen: 190, ts: 190)
        phone.since = 100
        let published = PersonPresence(id: "alice", name: "Alice", state: .home, room: "kitchen", roomName: "Kitchen", floor: 0,
                                       confidence: 0.9, beacon: Self.phone, reason: nil, since: 50, lastSeen: 190, ts: 190)
        var messages = [(topics.presence(Self.tag), try WireFormat.encode(tag)), (topics.presence(Self.phone), try WireFormat.encode(phone))]
        let person = (topics.person("alice"), try WireFormat.encode(published))
        messages.insert(person, at: personFirst ? 0 : 2)
        // Anyone may publish retained: one on another person's topic naming Alice is nobody's.
        var forged = published
        forged.since = 10
        messages.append((topics.person("bob"), try WireFormat.encode(forged)))
        for (topic, payload) in messages { _ = await runtime.handle(topic: topic, payload: payload, now: 200, retained: true) }
        let alice = await runtime.core.publisher.people.current["alice"]
        #expect(alice?.room == "kitchen" && alice?.since == 50, "\(String(describing: alice))")

        // `aggregator replay` of the same restart takes the person's retained topic as live.
        var core = AggregatorConfig(site: Self.site, discovery: .init(enabled: false)).makeCore()
        var report = ReplayRunner.Report()
        try ReplayRunner.run(core: &core, inputs: messages.map { MessageLogLine(ts: 200, topic: $0.0, payload: $0.1, retain: true) },
                             report: &report) { _ in }
        let replayed = core.publisher.people.current["alice"]
        #expect(replayed?.room == "kitchen" && replayed?.since == 50, "replay: \(String(describing: replayed))")
    }

    /// What was published before a restart is of that stay only: a person who left the room and
    /// came back is in it since they came back.
    @Test func aRetainedSinceIsOfItsStayOnly() throws {
        var p = PeopleTracker(site: Self.site)
        let published = PersonPresence(id: "alice", name: "Alice", state: .home, room: "kitchen", roomName: "Kitchen", floor: 0,
                                       confidence: 0.9, beacon: Self.tag, reason: nil, since: 50, lastSeen: 190, ts: 190)
        p.resumeRetained(published, now: 200)
        var back = decision(Self.tag, "kitchen", lastSeen: 2000, ts: 2000)
        back.since = 2000  // left after the restart, and came back at 2000
        p.observe(back)
        _ = p.update(now: 2000)
        #expect(p.current["alice"]?.since == 2000)
    }

    /// A restart works everyone out afresh: a person's `since` was the restart's time, not when
    /// they entered the room (or left), which their beacons' resumed decisions carry.
    @Test func aRestartKeepsWhenAPersonEnteredOrLeft() throws {
        var p = PresencePublisher(topics: Topics(), site: Self.site)
        var inOffice = decision(Self.tag, "office", lastSeen: 99, ts: 99)
        inOffice.since = 50
        p.resume(from: [inOffice])
        #expect(p.people.current["alice"]?.since == 50)
        var left = decision(Self.tag, nil, lastSeen: 80, ts: 99)
        left.since = 90
        var leftEarlier = decision(Self.phone, nil, lastSeen: 60, ts: 99)
        leftEarlier.since = 70
        // Resumed one retained message at a time, as at a start, in either order.
        for order in [[left, leftEarlier], [leftEarlier, left]] {
            var gone = PresencePublisher(topics: Topics(), site: Self.site)
            for d in order { gone.resume(from: [d]) }
            #expect(gone.people.current["alice"]?.state == .notHome)
            #expect(gone.people.current["alice"]?.since == 90, "away since the last of her beacons left")
        }
        // In a room by one beacon, away by the other: in the room since that beacon is.
        var inKitchen = decision(Self.phone, "kitchen", lastSeen: 99, ts: 99)
        inKitchen.since = 40
        for order in [[left, inKitchen], [inKitchen, left]] {
            var home = PresencePublisher(topics: Topics(), site: Self.site)
            for d in order { home.resume(from: [d]) }
            #expect(home.people.current["alice"]?.room == "kitchen")
            #expect(home.people.current["alice"]?.since == 40)
        }
    }

    /// At every reconnect the broker resends the retained presence. The stale copy was fed to
    /// the people tracker again: Alice, placed by her phone in the kitchen, moved to the hall
    /// her tag was in, and as the tracker held that already, nothing said so until the next
    /// refresh.
    @Test func retainedPresenceReadAgainAtAReconnectMovesNobody() throws {
        var p = PresencePublisher(topics: Topics(), site: Self.site)
        _ = try p.publish([decision(Self.phone, "kitchen", confidence: 0.8, lastSeen: 40, ts: 40),
                           decision(Self.tag, "office", confidence: 0.75, lastSeen: 40, ts: 40)], now: 40)
        #expect(p.people.current["alice"]?.room == "kitchen")
        // The phone's retained copy, published at 10, comes back with the reconnect.
        p.resume(from: [decision(Self.phone, "kitchen", confidence: 0.8, lastSeen: 10, ts: 10)])
        let refreshed = try p.refresh([], now: 41)
        #expect(p.people.current["alice"]?.room == "kitchen")
        #expect(try person(in: refreshed)?.room == "kitchen")
    }

    /// Through the real engine: Alice's tag sits in the kitchen, heard every half second; after
    /// ten minutes her phone turns up in the office. The engine reports a decision only when a
    /// room changes, so the tracker kept the tag's from ten minutes before, not recent: the
    /// phone alone decided and Alice went to the office, and her `last_seen` stood still. The
    /// steady tag is as sure as the phone, so it keeps deciding, and she stays in the kitchen.
    @Test func aSteadyBeaconStaysRecentAndKeepsDeciding() throws {
        var core = AggregatorConfig(site: Self.site, discovery: .init(enabled: false)).makeCore()
        _ = try core.start(now: 0)
        let topics = Topics()
        var seq: UInt64 = 0
        var out: [OutboundMessage] = []
        func heard(_ id: BeaconID, _ node: String, _ rssi: Double, at t: Double) throws {
            seq += 1
            let r = BeaconReading(id: id, node: node, ts: t, seq: seq, rssi: Int(rssi), rssiFiltered: rssi, power: -59,
                                  distance: 1, proximity: .near, kind: .iBeacon, mac: "aa:bb:cc:dd:ee:ff")
            out += try core.handle(topic: topics.nodeBeacon(node, id), payload: WireFormat.encode(r), now: t).messages
        }
        var t = 1.0
        while t < 700 {
            try heard(Self.tag, "kitchen-pi", -55, at: t)
            try heard(Self.tag, "office-pi", -75, at: t)
            if t >= 600 {
                try heard(Self.phone, "office-pi", -58, at: t)
                try heard(Self.phone, "kitchen-pi", -72, at: t)
            }
            out += try core.advance(to: t)
            t += 0.5
        }
        #expect(core.engine.decision(for: Self.phone)?.room == "office", "the phone is placed in the office")
        let alice = try #require(try person(in: out))
        #expect(alice.room == "kitchen", "Alice follows her steady tag: \(alice.room ?? "away") by \(alice.beacon?.rawValue ?? "-")")
        let refreshed = try #require(try person(in: try core.refresh(now: 700)))
        #expect((refreshed.lastSeen ?? 0) > 695, "her last_seen is her beacons' newest: \(refreshed.lastSeen ?? 0)")
    }
}
