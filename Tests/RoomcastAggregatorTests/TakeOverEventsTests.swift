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
    /// `tickFirst`: each step's tick comes before its reading, so a move heard at one step is
    /// decided inside the next step's tick (the lease's own, for a move heard just before it).
    /// `alphaPublishes`: alpha's decision reaches beta (a beacon alpha never published, else).
    static func takeOver(moves: Bool, at moveAt: Double = 4.5, tickFirst: Bool = false, alphaPublishes: Bool = true) async throws
        -> (published: [OutboundMessage], active: Bool, tookOver: Double?) {
        let beta = Self.instance("beta")
        var published: [OutboundMessage] = []
        func send(_ out: [OutboundMessage]) async { published += await Self.sent(out, by: beta) }
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
            if t == 3.5 && alphaPublishes {
                // Alpha's decision, heard live past the resume window.
                let office = PresenceDecision(id: cat, name: "Cat", room: "office", floor: 1, distance: 1, confidence: 1, node: "office-pi",
                                              since: 1, lastSeen: 3.5, evidence: [], ts: 3.5)
                await send(beta.handle(topic: Topics().presence(cat), payload: try WireFormat.encode(office), now: t, retained: false))
            }
            await send(beta.tickAnswered(now: t))
        }
        #expect(await !beta.isActive, "alpha holds the lease")
        #expect(published.isEmpty)
        var tookOver: Double?
        for t in stride(from: 4.5, through: 12, by: 0.5) {
            seq += 1
            let moved = moves && t >= moveAt
            if tickFirst { await send(beta.tickAnswered(now: t)) }
            try await hear(moved ? "kitchen-pi" : "office-pi", rssi: moved ? -30 : -40, at: t, seq: seq)
            if !tickFirst { await send(beta.tickAnswered(now: t)) }
            if tookOver == nil, await beta.isActive { tookOver = t }
        }
        return (published, await beta.isActive, tookOver)
    }

    /// An instance under hot standby whose engine decides at once (`StrongestLatest`).
    static func instance(_ me: String) -> AggregatorRuntime<StrongestLatest> {
        let core = AggregatorCore(engine: StrongestLatest(roomOfNode: ["kitchen-pi": "kitchen", "office-pi": "office"]),
                                  site: site, topics: Topics(), discovery: nil)
        return AggregatorRuntime(core: core, election: LeaseElection(me: me, topics: Topics(), duration: 6),
                                 refreshInterval: .infinity, startedAt: 0, logger: .silent)
    }

    /// What of `out` the service would publish: nothing while standing by, and no control topics.
    static func sent(_ out: [OutboundMessage], by instance: AggregatorRuntime<StrongestLatest>) async -> [OutboundMessage] {
        guard await instance.isActive else { return [] }
        return out.filter { !instance.isControlTopic($0.topic) && $0.topic != instance.syncTopic }
    }

    static func events(_ published: [OutboundMessage]) -> [RoomEvent] {
        published.filter { $0.topic == Topics().events }.compactMap { try? WireFormat.decode(RoomEvent.self, from: $0.payload) }
    }

    @Test func aMoveDecidedBeforeTheTakeOverHasItsEvents() async throws {
        let (published, active, _) = try await Self.takeOver(moves: true)
        #expect(active, "alpha's lease ran out at 10 s")
        let presence = published.filter { $0.topic == Topics().presence(cat) }.compactMap { try? WireFormat.decode(PresenceDecision.self, from: $0.payload) }
        #expect(presence.last?.room == "kitchen")
        let events = Self.events(published).map { "\($0.event.rawValue) \($0.room)" }
        #expect(events == ["leave office", "enter kitchen"], "\(events)")
        #expect(Self.events(published).allSatisfy { $0.id == cat && $0.name == "Cat" })
    }

    /// An instance with standby configured starts standing by, reading its own retained presence
    /// (the cat in the kitchen), and takes the lease while decisions are still held after the
    /// backlog. The cat, heard only in the office, is then moved once: the move's events go out
    /// once, not again at the refresh that ends the hold.
    @Test func aMoveDecidedAfterTakingTheLeaseIsAnnouncedOnce() async throws {
        // Its engine decides at the first tick the hold allows: the move comes on that tick.
        let alpha = Self.instance("alpha")
        var published: [OutboundMessage] = []
        func send(_ out: [OutboundMessage]) async { published += await Self.sent(out, by: alpha) }
        await alpha.brokerConnected(now: 0)
        let kitchen = PresenceDecision(id: cat, name: "Cat", room: "kitchen", floor: 0, distance: 1, confidence: 1, node: "kitchen-pi",
                                       since: -100, lastSeen: -1, evidence: [], ts: -1)
        await send(alpha.handle(topic: Topics().presence(cat), payload: try WireFormat.encode(kitchen), now: 0, retained: true))
        var seq: UInt64 = 0
        var activeAt: Double?
        for t in stride(from: 0.0, through: 30, by: 0.5) {
            seq += 1
            await send(alpha.handle(topic: Topics().nodeBeacon("office-pi", cat),
                                    payload: try WireFormat.encode(reading("office-pi", rssi: -45, ts: t, seq: seq)), now: t))
            await send(alpha.tickAnswered(now: t))
            if activeAt == nil, await alpha.isActive { activeAt = t }
        }
        #expect(activeAt != nil, "alpha took its lease")
        let events = Self.events(published).map { "\($0.event.rawValue) \($0.room)" }
        #expect(events == ["leave kitchen", "enter office"], "\(events)")
    }

    @Test func aBeaconThatStayedHasNoEventAtTheTakeOver() async throws {
        let (published, active, _) = try await Self.takeOver(moves: false)
        #expect(active)
        #expect(published.contains { $0.topic == Topics().presence(cat) }, "the take-over's refresh")
        #expect(Self.events(published).isEmpty, "\(Self.events(published))")
    }

    /// A move decided in the very tick the lease is taken: its events go out once, whether alpha
    /// had published the beacon (the take-over's messages say it) or not (the tick's own say it).
    @Test func aMoveDecidedInTheTickTheLeaseIsTakenIsAnnouncedOnce() async throws {
        let (_, _, tookOver) = try await Self.takeOver(moves: false)
        for alphaPublishes in [true, false] {
            let (sameTick, _, tookOverToo) = try await Self.takeOver(moves: true, at: try #require(tookOver) - 0.5, tickFirst: true,
                                                                     alphaPublishes: alphaPublishes)
            #expect(tookOverToo == tookOver)
            let events = Self.events(sameTick).map { "\($0.event.rawValue) \($0.room)" }
            #expect(events == ["leave office", "enter kitchen"], "alpha published: \(alphaPublishes): \(events)")
        }
    }
}

extension TakeOverEventsTests {
    static func presence(_ id: BeaconID, _ room: String?) throws -> [UInt8] {
        try WireFormat.encode(PresenceDecision(id: id, name: nil, room: room, floor: 0, distance: nil, confidence: 1, node: nil,
                                               since: 0, lastSeen: 0, evidence: [], ts: 0))
    }

    /// What a standby reads of the active instance's presence: bounded, only the site's rooms,
    /// cleared by an empty retained message, and under `partition:` only its own partition's rooms (another
    /// partition's room supersedes; an away cannot be told from another partition's, so it
    /// leaves nothing known).
    @Test func theActivesPresenceIsReadBoundedAndPartitionWise() throws {
        let dog = BeaconID("ibeacon:e06f95e4-fcfc-42c6-b4f8-f6bae87ea1a0-1233-46")!
        let known: Set<String>? = ["office", "kitchen", "attic"]
        var alone = PeerPresence(limit: 1)
        alone.observe(cat, payload: try Self.presence(cat, "office"), otherPartitionsRooms: [], rooms: known)
        alone.observe(dog, payload: try Self.presence(dog, "office"), otherPartitionsRooms: [], rooms: known)
        #expect(alone.rooms == [cat: "office"], "one beacon at most")
        alone.observe(cat, payload: try Self.presence(cat, nil), otherPartitionsRooms: [], rooms: known)
        #expect(alone.rooms[cat] == .some(nil), "away")
        alone.observe(cat, payload: [], otherPartitionsRooms: [], rooms: known)
        #expect(alone.rooms.isEmpty)
        alone.observe(cat, payload: try Self.presence(cat, "kitchen"), otherPartitionsRooms: [], rooms: known)
        alone.observe(cat, payload: Array("{".utf8), otherPartitionsRooms: [], rooms: known)
        alone.observe(cat, payload: try Self.presence(dog, "office"), otherPartitionsRooms: [], rooms: known)
        #expect(alone.rooms == [cat: "kitchen"], "undecodable, or another beacon's: ignored")
        // Any client may write the topics: a room the site does not have is neither kept nor named.
        alone.observe(cat, payload: try Self.presence(cat, String(repeating: "x", count: 60_000)), otherPartitionsRooms: [],
                      rooms: known)
        #expect(alone.rooms.isEmpty, "a room of no site's: nothing known")

        var partition = PeerPresence(limit: 10)
        partition.observe(cat, payload: try Self.presence(cat, "office"), otherPartitionsRooms: ["attic"], rooms: known)
        partition.observe(cat, payload: try Self.presence(cat, nil), otherPartitionsRooms: ["attic"], rooms: known)
        #expect(partition.rooms.isEmpty, "an away may be the other partition's: nothing known, no event")
        partition.observe(cat, payload: try Self.presence(cat, "office"), otherPartitionsRooms: ["attic"], rooms: known)
        partition.observe(cat, payload: try Self.presence(cat, "attic"), otherPartitionsRooms: ["attic"], rooms: known)
        #expect(partition.rooms.isEmpty, "the other partition has it")
    }

    /// On a site that lists no nodes (rooms made of the nodes heard) a standby keeps any name a
    /// room can have, also one this instance has not heard yet; nothing else.
    @Test func onASiteOfHeardNodesAnyRoomNameIsKept() throws {
        var heard = PeerPresence(limit: 10)
        heard.observe(cat, payload: try Self.presence(cat, "attic-pi"), otherPartitionsRooms: [], rooms: nil)
        #expect(heard.rooms == [cat: "attic-pi"])
        heard.observe(cat, payload: try Self.presence(cat, String(repeating: "x", count: 60_000)), otherPartitionsRooms: [], rooms: nil)
        #expect(heard.rooms.isEmpty)
    }
}
