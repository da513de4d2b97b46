import Shared
import Testing
@testable import RoomcastAggregator

/// A standby decides all along and publishes nothing. A beacon that moves after the active
/// instance died, before the standby takes the lease, is republished in its new room at the
/// take-over; its leave and enter events, which the dead instance never sent, go with it.
@Suite struct TakeOverEventsTests {
    /// What `beta`, standing by for `alpha`, publishes as the service would (only while
    /// active): alpha places the cat in the office and dies at 4 s; the cat is then heard
    /// loudest in the kitchen when `moves`; beta takes the lease when alpha's runs out (10 s).
    static func takeOver(moves: Bool) async throws -> (published: [OutboundMessage], active: Bool) {
        let core = AggregatorCore(engine: StrongestLatest(roomOfNode: ["kitchen-pi": "kitchen", "office-pi": "office"]),
                                  site: site, topics: Topics(), discovery: nil)
        let beta = AggregatorRuntime(core: core, election: LeaseElection(me: "beta", topics: Topics(), duration: 6),
                                     refreshInterval: .infinity, startedAt: 0, logger: .silent)
        var published: [OutboundMessage] = []
        func send(_ out: [OutboundMessage]) async {
            if await beta.isActive { published += out.filter { !beta.isControlTopic($0.topic) && $0.topic != beta.syncTopic } }
        }
        func lease(at now: Double) async throws {
            _ = await beta.handle(topic: "roomcast/aggregator/lease",
                                  payload: try WireFormat.encode(LeaseElection.Lease(holder: "alpha", expires: now + 6)), now: now, retained: true)
        }
        func hear(_ node: String, rssi: Double, at now: Double, seq: UInt64) async throws {
            await send(beta.handle(topic: Topics().nodeBeacon(node, cat), payload: try WireFormat.encode(reading(node, rssi: rssi, ts: now, seq: seq)),
                                   now: now))
        }
        await beta.brokerConnected(now: 0)
        try await lease(at: 0)
        var seq: UInt64 = 0
        for t in stride(from: 0.5, through: 4, by: 0.5) {
            seq += 1
            try await hear("office-pi", rssi: -50, at: t, seq: seq)
            if t == 2 || t == 4 { try await lease(at: t) }
            if t == 3.5 {
                // Alpha's decision, heard live past the resume window.
                let office = PresenceDecision(id: cat, name: "Cat", room: "office", floor: 1, distance: 1, confidence: 1, node: "office-pi",
                                              since: 1, lastSeen: 3.5, evidence: [], ts: 3.5)
                await send(beta.handle(topic: Topics().presence(cat), payload: try WireFormat.encode(office), now: t, retained: false))
            }
            await send(beta.tickAnswered(now: t))
        }
        #expect(await !beta.isActive, "alpha holds the lease")
        #expect(published.isEmpty)
        for t in stride(from: 4.5, through: 12, by: 0.5) {
            seq += 1
            try await hear(moves ? "kitchen-pi" : "office-pi", rssi: -40, at: t, seq: seq)
            await send(beta.tickAnswered(now: t))
        }
        return (published, await beta.isActive)
    }

    static func events(_ published: [OutboundMessage]) -> [RoomEvent] {
        published.filter { $0.topic == Topics().events }.compactMap { try? WireFormat.decode(RoomEvent.self, from: $0.payload) }
    }

    @Test func aMoveDecidedBeforeTheTakeOverHasItsEvents() async throws {
        let (published, active) = try await Self.takeOver(moves: true)
        #expect(active, "alpha's lease ran out at 10 s")
        let presence = published.filter { $0.topic == Topics().presence(cat) }.compactMap { try? WireFormat.decode(PresenceDecision.self, from: $0.payload) }
        #expect(presence.last?.room == "kitchen")
        let events = Self.events(published).map { "\($0.event.rawValue) \($0.room)" }
        #expect(events == ["leave office", "enter kitchen"], "\(events)")
        #expect(Self.events(published).allSatisfy { $0.id == cat && $0.name == "Cat" })
    }

    @Test func aBeaconThatStayedHasNoEventAtTheTakeOver() async throws {
        let (published, active) = try await Self.takeOver(moves: false)
        #expect(active)
        #expect(published.contains { $0.topic == Topics().presence(cat) }, "the take-over's refresh")
        #expect(Self.events(published).isEmpty, "\(Self.events(published))")
    }
}

extension TakeOverEventsTests {
    static func presence(_ id: BeaconID, _ room: String?) throws -> [UInt8] {
        try WireFormat.encode(PresenceDecision(id: id, name: nil, room: room, floor: 0, distance: nil, confidence: 1, node: nil,
                                               since: 0, lastSeen: 0, evidence: [], ts: 0))
    }

    /// What a standby reads of the active instance's presence: bounded, cleared by an empty
    /// retained message, and under `partition:` only its own partition's rooms (another
    /// partition's room supersedes; an away cannot be told from another partition's).
    @Test func theActivesPresenceIsReadBoundedAndPartitionWise() throws {
        let dog = BeaconID("ibeacon:e06f95e4-fcfc-42c6-b4f8-f6bae87ea1a0-1233-46")!
        var alone = PeerPresence(limit: 1)
        alone.observe(cat, payload: try Self.presence(cat, "office"), otherPartitionsRooms: [])
        alone.observe(dog, payload: try Self.presence(dog, "office"), otherPartitionsRooms: [])
        #expect(alone.rooms == [cat: "office"], "one beacon at most")
        alone.observe(cat, payload: try Self.presence(cat, nil), otherPartitionsRooms: [])
        #expect(alone.rooms[cat] == .some(nil), "away")
        alone.observe(cat, payload: [], otherPartitionsRooms: [])
        #expect(alone.rooms.isEmpty)
        alone.observe(cat, payload: Array("{".utf8), otherPartitionsRooms: [])
        alone.observe(cat, payload: try Self.presence(dog, "office"), otherPartitionsRooms: [])
        #expect(alone.rooms.isEmpty, "undecodable, or another beacon's")

        var partition = PeerPresence(limit: 10)
        partition.observe(cat, payload: try Self.presence(cat, "office"), otherPartitionsRooms: ["attic"])
        partition.observe(cat, payload: try Self.presence(cat, nil), otherPartitionsRooms: ["attic"])
        #expect(partition.rooms == [cat: "office"], "an away may be the other partition's")
        partition.observe(cat, payload: try Self.presence(cat, "attic"), otherPartitionsRooms: ["attic"])
        #expect(partition.rooms.isEmpty, "the other partition has it")
    }
}
