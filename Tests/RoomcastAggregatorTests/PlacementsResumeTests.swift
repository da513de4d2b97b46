import Foundation
import RoomcastFusion
import Shared
import Testing
@testable import RoomcastAggregator
import RoomcastLogging

/// A broker without persistence loses every retained presence at a power cut. The aggregator
/// restarted with it resumes from the rooms its state file says each beacon was last published
/// in: no `enter` event for a beacon that stayed put, its `since` kept, and a beacon that then
/// moves is followed. Where the broker retained the beacon too, the newer of the two wins.
@Suite struct PlacementsResumeTests {
    static let tag = AggregatorLearningTests.tag
    let topics = Topics()

    func store() throws -> LearnedRoomsStore {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("roomcast-placed-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        return LearnedRoomsStore(path: dir + "/learned-rooms.json")
    }

    func runtime(_ store: LearnedRoomsStore, log: InMemoryLogHandler = InMemoryLogHandler(),
                 site: SiteModel = AggregatorLearningTests.site) -> AggregatorRuntime<FusionEngine> {
        let core = AggregatorCore(engine: FusionEngine(site: site), site: site, topics: topics, discovery: nil)
        return AggregatorRuntime(core: core, election: nil, refreshInterval: .infinity, startedAt: 0,
                                 learnedStore: store, logger: Logger(label: "test", level: .info, handler: log))
    }

    /// Connects the runtime and reads its drain marker back, as the broker would deliver it.
    func connect(_ runtime: AggregatorRuntime<FusionEngine>, at now: Double) async throws {
        await runtime.brokerConnected(now: now)
        let marker = try #require(await runtime.tick(now: now).first { $0.topic == runtime.syncTopic })
        _ = await runtime.handle(topic: marker.topic, payload: marker.payload, now: now)
    }

    /// The tag heard at these levels over `from..<to`, each reading followed by a tick, then
    /// ticks every half second until `until`: everything published.
    func play(_ runtime: AggregatorRuntime<FusionEngine>, from: Double, to: Double, until: Double,
              kitchen: Double = -62, office: Double = -78) async throws -> [OutboundMessage] {
        var out: [OutboundMessage] = []
        for line in try AggregatorLearningTests.lines(from: from, to: to, kitchen: kitchen, office: office) {
            out += await runtime.handle(topic: line.topic, payload: line.payload, now: line.ts)
            out += await runtime.tickAnswered(now: line.ts)
        }
        out += await ticks(runtime, from: to, until: until)
        return out
    }

    /// Ticks every half second over `from..<until`; with `heartbeats`, each node says every
    /// second that it is listening.
    func ticks(_ runtime: AggregatorRuntime<FusionEngine>, from: Double, until: Double, heartbeats: Bool = false) async -> [OutboundMessage] {
        var out: [OutboundMessage] = []
        var t = from
        while t < until {
            if heartbeats, t.rounded() == t {
                for node in ["kitchen-pi", "office-pi"] {
                    let beat = NodeHeartbeat(ts: t)
                    out += await runtime.handle(topic: topics.nodeHeartbeat(node), payload: (try? WireFormat.encode(beat)) ?? [], now: t)
                }
            }
            out += await runtime.tickAnswered(now: t)
            t += 0.5
        }
        return out
    }

    /// A first run in which the tag sat in the kitchen, stopped gracefully: its state file, the
    /// tag's `since` there and its last decision.
    func kitchenBeforeTheCut() async throws -> (store: LearnedRoomsStore, since: Double, decision: PresenceDecision) {
        let store = try store()
        let first = runtime(store)
        try await connect(first, at: 1000)
        _ = try await play(first, from: 1000, to: 1030, until: 1032)
        let decision = try #require(await first.decision(for: Self.tag))
        await first.persistLearnedAtStop(now: 1032)
        #expect(try store.load()?.placed.map(\.room) == ["kitchen"])
        return (store, decision.since, decision)
    }

    /// After `kitchenBeforeTheCut`, a restart whose broker holds the tag's presence in the office
    /// since `since`, published at `at`: what the restarted aggregator publishes in its first 5.5 s.
    func restartWithTheBrokerSayingOffice(since: Double, at: Double, log: InMemoryLogHandler = InMemoryLogHandler()) async throws -> [OutboundMessage] {
        let (store, _, last) = try await kitchenBeforeTheCut()
        let second = runtime(store, log: log)
        try await connect(second, at: 5000)
        var retained = last
        retained.room = "office"
        retained.since = since
        retained.ts = at
        _ = await second.handle(topic: topics.presence(Self.tag), payload: try retained.wireJSON(), now: 5000.5, retained: true)
        return await ticks(second, from: 5000.5, until: 5006)
    }

    func presence(_ out: [OutboundMessage]) -> [PresenceDecision] {
        out.filter { $0.topic == topics.presence(Self.tag) && !$0.payload.isEmpty }
            .compactMap { try? WireFormat.decode(PresenceDecision.self, from: $0.payload) }
    }

    func events(_ out: [OutboundMessage]) -> [RoomEvent] {
        out.filter { $0.topic == topics.events }.compactMap { try? WireFormat.decode(RoomEvent.self, from: $0.payload) }
    }

    /// The tag sat in the kitchen; the aggregator and a broker that kept nothing restart. The
    /// tag is published in the kitchen again since it first entered it, with no event; when it
    /// is then carried to the office it is followed there.
    @Test func aRestartOnABrokerThatKeptNothingResumesTheRoomsLastPublished() async throws {
        let store = try store()
        let first = runtime(store)
        try await connect(first, at: 1000)
        let before = try await play(first, from: 1000, to: 1030, until: 1032)
        #expect(events(before).map(\.room) == ["kitchen"])
        let since = try #require(await first.decision(for: Self.tag)).since
        // Written at once: the first room change since the start.
        #expect(try store.load()?.placed.map(\.room) == ["kitchen"])
        await first.persistLearnedAtStop(now: 1032)

        let log = InMemoryLogHandler()
        let second = runtime(store, log: log)
        try await connect(second, at: 5000)
        let resumed = await ticks(second, from: 5000, until: 5006)
        let published = presence(resumed)
        #expect(!published.isEmpty && published.allSatisfy { $0.room == "kitchen" && $0.since == since }, "\(published)")
        #expect(events(resumed).isEmpty, "a beacon that stayed put enters no room: \(events(resumed))")
        #expect(await second.decision(for: Self.tag)?.room == "kitchen")
        #expect(log.records.contains { $0.message.hasPrefix("the broker held no retained presence") })
        // They are not what was learned: the learn state (published, and shown) leaves them out.
        #expect(await second.learnedRooms.placed.isEmpty)

        // Heard where it was: still no event, and the same `since`.
        let stayed = try await play(second, from: 5006, to: 5016, until: 5017)
        #expect(events(stayed).isEmpty, "\(events(stayed))")
        #expect(await second.decision(for: Self.tag)?.since == since)

        let moved = try await play(second, from: 5017, to: 5050, until: 5051, kitchen: -78, office: -62)
        #expect(events(moved).filter { $0.event == .enter }.map(\.room) == ["office"])
        #expect(await second.decision(for: Self.tag)?.room == "office")
        await second.persistLearnedAtStop(now: 5051)
        #expect(try store.load()?.placed.map(\.room) == ["office"])
    }

    /// The file written within the start's resume window, before its rooms were resumed (here
    /// a taught room forgotten at once, written straight away), and the aggregator stopped
    /// there: the file keeps the rooms, and the run after resumes the tag in the kitchen.
    /// Written from what was published alone, it lost every room.
    @Test func aWriteWithinTheResumeWindowKeepsTheFilesRooms() async throws {
        let (store, since, _) = try await kitchenBeforeTheCut()
        var file = try #require(try store.load())
        file.rooms = [LearnedRooms.Room(name: "office", seconds: 5, nodes: [
            LearnedRooms.NodeLevel(node: "office-pi", seconds: 5, mean: -60, spread: 3, room: "office")])]
        _ = try store.save(file)
        let brief = runtime(store)
        try await connect(brief, at: 2000)
        let forget = LearnCommand(.forget(room: "office"), request: "f")
        let answer = await brief.handle(topic: topics.aggregatorLearn, payload: try forget.encoded(), now: 2000.2)
        #expect(answer.contains { $0.topic == topics.aggregatorLearnResult })
        _ = await ticks(brief, from: 2000.5, until: 2001)
        #expect(await brief.decision(for: Self.tag) == nil, "resumed before the window was over")
        let written = try #require(try store.load())
        #expect(written.rooms.isEmpty, "the forget was not written within the window")
        #expect(written.placed.map(\.room) == ["kitchen"])
        await brief.persistLearnedAtStop(now: 2001)
        #expect(try store.load()?.placed.map(\.room) == ["kitchen"])

        let next = runtime(store)
        try await connect(next, at: 3000)
        let resumed = presence(await ticks(next, from: 3000, until: 3006))
        #expect(!resumed.isEmpty && resumed.allSatisfy { $0.room == "kitchen" && $0.since == since }, "\(resumed)")
    }

    /// A home's file of a few kB is written a minute after a room changes; a site's of many
    /// beacons, past `placementsWriteBudget`, as much longer as it is bigger: the disk takes
    /// that budget a minute on average.
    @Test func aBigStateFileIsWrittenLessOften() throws {
        let site = SiteModel(rooms: AggregatorLearningTests.site.rooms, nodes: AggregatorLearningTests.site.nodes)
        var core = AggregatorCore(engine: FusionEngine(site: site), site: site, topics: topics, discovery: nil)
        _ = try core.start(now: 0)
        let store = try store()
        var persistence = LearnedRoomsPersistence(store: store, core: &core, log: RateLimitedLog(), logger: .silent)
        /// `ids` heard in the kitchen over `from..<from + 10`, then placed.
        func place(_ ids: [BeaconID], from: Double) throws {
            var seq: UInt64 = 0
            for t in stride(from: from, to: from + 10, by: 1) {
                seq += 1
                for id in ids {
                    let r = BeaconReading(id: id, node: "kitchen-pi", ts: t, seq: seq, rssi: -55, rssiFiltered: -55, power: -59,
                                          distance: 1, proximity: .near, kind: .iBeacon, mac: "aa:bb:cc:dd:ee:ff")
                    _ = try core.handle(topic: topics.nodeBeacon("kitchen-pi", id), payload: WireFormat.encode(r), now: t)
                }
                _ = try core.advance(to: t + 0.5)
            }
        }
        let many = (1...600).map { BeaconID("ibeacon:e06f95e4-fcfc-42c6-b4f8-f6bae87ea1a0-9-\($0)")! }
        try place(many, from: 10)
        persistence.persist(core, now: 20)
        let bytes = try #require(try FileManager.default.attributesOfItem(atPath: store.path)[.size] as? Int)
        #expect(try store.load()?.placed.count == 600)
        #expect(bytes > 2 * LearnedRoomsPersistence.placementsWriteBudget, "\(bytes) bytes")
        let wait = LearnedRoomsPersistence.placementsSaveInterval * Double(bytes) / Double(LearnedRoomsPersistence.placementsWriteBudget)
        try place([BeaconID("ibeacon:e06f95e4-fcfc-42c6-b4f8-f6bae87ea1a0-9-9999")!], from: 20)
        func due(at now: Double) -> Bool {
            persistence.isDue(learnedRevision: core.learnedRevision, departuresRevision: core.departuresRevision,
                              placementsRevision: core.placementsRevision, now: now, stopping: false)
        }
        #expect(!due(at: 20 + LearnedRoomsPersistence.placementsSaveInterval + 1), "written a minute after, at \(bytes) bytes")
        #expect(!due(at: 20 + wait - 1))
        #expect(due(at: 20 + wait + 1))
        #expect(persistence.isDue(learnedRevision: core.learnedRevision, departuresRevision: core.departuresRevision,
                                  placementsRevision: core.placementsRevision, now: 21, stopping: true), "a stop writes at once")
    }

    /// The broker kept the tag's presence (in the office, where another instance published it
    /// last): that wins over the state file's kitchen.
    @Test func theBrokersRetainedPresenceWinsOverTheStateFile() async throws {
        let log = InMemoryLogHandler()
        let out = try await restartWithTheBrokerSayingOffice(since: 4000, at: 4500, log: log)
        let published = presence(out)
        #expect(!published.isEmpty && published.allSatisfy { $0.room == "office" && $0.since == 4000 }, "\(published)")
        #expect(events(out).isEmpty)
        #expect(!log.records.contains { $0.message.hasPrefix("the broker held no retained presence") }, "it held it")
    }

    /// The Pis were up before the aggregator: the tag is heard from the moment it connects,
    /// before the resume window ends. It is resumed first, then heard: no event.
    @Test func aBeaconHeardAtOnceIsResumedBeforeItIsDecided() async throws {
        let (store, since, _) = try await kitchenBeforeTheCut()
        let second = runtime(store)
        try await connect(second, at: 5000)
        let out = try await play(second, from: 5000, to: 5015, until: 5016)
        #expect(events(out).isEmpty, "\(events(out))")
        #expect(await second.decision(for: Self.tag)?.room == "kitchen")
        #expect(await second.decision(for: Self.tag)?.since == since)
    }

    /// A broker that saves its retained messages only now and then (mosquitto's autosave) can
    /// come back with a copy older than the state file's: the file's room, newer, wins.
    @Test func aStateFileNewerThanTheBrokersCopyWins() async throws {
        let out = try await restartWithTheBrokerSayingOffice(since: 500, at: 600)
        #expect(!presence(out).isEmpty && presence(out).allSatisfy { $0.room == "kitchen" }, "\(presence(out))")
        #expect(events(out).isEmpty)
    }

    /// A tag that sleeps when still, resting in the kitchen at the power cut, rests on after the
    /// restart while its nodes listen past the away timeout.
    @Test func aRestingTagRestsOnAfterTheRestart() async throws {
        var site = AggregatorLearningTests.site
        site.beacons = [.init(id: Self.tag, name: "Keys", sleepsWhenStill: true)]
        let store = try store()
        let first = runtime(store, site: site)
        try await connect(first, at: 1000)
        _ = try await play(first, from: 1000, to: 1030, until: 1030)
        _ = await ticks(first, from: 1030, until: 1100, heartbeats: true)
        #expect(await first.decision(for: Self.tag)?.reason == "resting")
        await first.persistLearnedAtStop(now: 1100)
        #expect(try store.load()?.placed.map(\.reason) == ["resting"])

        let second = runtime(store, site: site)
        try await connect(second, at: 5000)
        let out = await ticks(second, from: 5000, until: 5100, heartbeats: true)
        #expect(events(out).isEmpty, "\(events(out))")
        #expect(await second.decision(for: Self.tag)?.room == "kitchen")
        #expect(await second.decision(for: Self.tag)?.reason == "resting")
    }

    /// A standby's state file is its own view of the site, kept as the active's is: it resumes
    /// from it too, and publishes those rooms when it takes over.
    @Test func aStandbyResumesTooAndPublishesThemWhenItTakesOver() async throws {
        let (store, since, _) = try await kitchenBeforeTheCut()
        let site = AggregatorLearningTests.site
        let core = AggregatorCore(engine: FusionEngine(site: site), site: site, topics: topics, discovery: nil)
        let standby = AggregatorRuntime(core: core, election: LeaseElection(me: "beta", topics: topics, duration: 6),
                                        refreshInterval: .infinity, startedAt: 0, learnedStore: store, logger: .silent)
        await standby.brokerConnected(now: 5000)
        let lease = try WireFormat.encode(LeaseElection.Lease(holder: "alpha", expires: 5010))
        _ = await standby.handle(topic: topics.aggregatorLease, payload: lease, now: 5000, retained: true)
        let marker = try #require(await standby.tick(now: 5000).first { $0.topic == standby.syncTopic })
        _ = await standby.handle(topic: marker.topic, payload: marker.payload, now: 5000)
        var out = await ticks(standby, from: 5000, until: 5004.5)
        #expect(await !standby.isActive, "alpha holds the lease past the resume window")
        #expect(await standby.decision(for: Self.tag)?.room == "kitchen")
        out += await ticks(standby, from: 5004.5, until: 5020)
        #expect(await standby.isActive, "alpha's lease ran out unrenewed")
        let published = presence(out)
        #expect(!published.isEmpty && published.allSatisfy { $0.room == "kitchen" && $0.since == since }, "\(published)")
        #expect(events(out).isEmpty)
    }

    /// A retained presence anybody could publish, with a time out of the state file's bounds,
    /// is resumed as ever, but the file written afterwards leaves it out rather than become
    /// unreadable (and with it what was taught).
    @Test func aPlacementOutOfTheFilesBoundsIsLeftOut() async throws {
        let store = try store()
        let r = runtime(store)
        try await connect(r, at: 2000)
        var forged = PresenceDecision(id: Self.tag, name: "Tag", room: "office", floor: nil, distance: nil, confidence: 1,
                                      node: "office-pi", since: -2e12, lastSeen: 1999, evidence: [], ts: 1999)
        forged.reason = "moved_nearest"
        _ = await r.handle(topic: topics.presence(Self.tag), payload: try forged.wireJSON(), now: 2000.5, retained: true)
        _ = await ticks(r, from: 2000.5, until: 2004)
        #expect(await r.decision(for: Self.tag)?.since == -2e12)
        let label = LearnCommand(.label(room: "office", beacon: Self.tag, seconds: 5))
        _ = await r.handle(topic: topics.aggregatorLearn, payload: label.encoded(), now: 2004)
        _ = try await play(r, from: 2004, to: 2015, until: 2016, kitchen: -78, office: -62)
        #expect(await r.decision(for: Self.tag)?.room == "office")
        await r.persistLearnedAtStop(now: 2016)
        let saved = try #require(try store.load(), "the file reads back")
        #expect(saved.room(named: "office") != nil, "what was taught is kept")
        #expect(saved.placed.isEmpty, "\(saved.placed)")
    }
}
