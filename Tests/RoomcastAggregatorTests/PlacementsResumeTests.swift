import Foundation
import RoomcastFusion
import Shared
import Testing
@testable import RoomcastAggregator
import RoomcastLogging

/// A broker without persistence loses every retained presence at a power cut. The aggregator
/// restarted with it resumes from the rooms its state file says each beacon was last published
/// in: no `enter` event for a beacon that stayed put, its `since` kept, and a beacon that then
/// moves is followed. What the broker did retain wins.
@Suite struct PlacementsResumeTests {
    static let tag = AggregatorLearningTests.tag
    let topics = Topics()

    func store() throws -> LearnedRoomsStore {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("roomcast-placed-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        return LearnedRoomsStore(path: dir + "/learned-rooms.json")
    }

    func runtime(_ store: LearnedRoomsStore, log: InMemoryLogHandler = InMemoryLogHandler()) -> AggregatorRuntime<FusionEngine> {
        let site = AggregatorLearningTests.site
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

    func ticks(_ runtime: AggregatorRuntime<FusionEngine>, from: Double, until: Double) async -> [OutboundMessage] {
        var out: [OutboundMessage] = []
        var t = from
        while t < until {
            out += await runtime.tickAnswered(now: t)
            t += 0.5
        }
        return out
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

    /// The broker kept the tag's presence (in the office, where another instance published it
    /// last): that wins over the state file's kitchen.
    @Test func theBrokersRetainedPresenceWinsOverTheStateFile() async throws {
        let store = try store()
        let first = runtime(store)
        try await connect(first, at: 1000)
        _ = try await play(first, from: 1000, to: 1030, until: 1032)
        await first.persistLearnedAtStop(now: 1032)
        #expect(try store.load()?.placed.map(\.room) == ["kitchen"])

        let second = runtime(store)
        try await connect(second, at: 5000)
        var retained = try #require(await first.decision(for: Self.tag))
        retained.room = "office"
        retained.since = 4000
        retained.ts = 4500
        _ = await second.handle(topic: topics.presence(Self.tag), payload: try retained.wireJSON(), now: 5000.5, retained: true)
        let out = await ticks(second, from: 5000.5, until: 5006)
        let published = presence(out)
        #expect(!published.isEmpty && published.allSatisfy { $0.room == "office" && $0.since == 4000 }, "\(published)")
        #expect(events(out).isEmpty)
    }
    /// A standby's state file is from when it last was active, older than what the active
    /// instance publishes: it lets those rooms go, and taking over later does not bring them back.
    @Test func aStandbyLetsTheStateFilesRoomsGo() async throws {
        let store = try store()
        let first = runtime(store)
        try await connect(first, at: 1000)
        _ = try await play(first, from: 1000, to: 1030, until: 1032)
        await first.persistLearnedAtStop(now: 1032)
        #expect(try store.load()?.placed.map(\.room) == ["kitchen"])

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
        out += await ticks(standby, from: 5004.5, until: 5020)
        #expect(await standby.isActive, "alpha's lease ran out unrenewed")
        #expect(presence(out).isEmpty, "\(presence(out))")
        #expect(await standby.decision(for: Self.tag) == nil)
    }
}
