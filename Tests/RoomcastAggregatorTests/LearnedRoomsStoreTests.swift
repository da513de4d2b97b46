import Foundation
import RoomcastFusion
import Shared
import Testing
@testable import RoomcastAggregator
import RoomcastLogging

/// The learned-rooms state file: written whole or not at all, read back as written, and a
/// file that cannot be read is reported and left alone by the service.
@Suite struct LearnedRoomsStoreTests {
    func directory() throws -> String {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("roomcast-learn-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        return dir
    }

    let learned = LearnedRooms(rooms: [.init(name: "kitchen", seconds: 29.5, nodes: [
        .init(node: "kitchen-pi", seconds: 29.5, mean: -3.25, spread: 1.5), .init(node: "office-pi", seconds: 20, mean: -19, spread: 3)])])

    @Test func aSavedFileReadsBackAndLeavesNoTemporaryFile() throws {
        let dir = try directory()
        let store = LearnedRoomsStore(path: dir + "/learned-rooms.json")
        #expect(try store.load() == nil)
        try store.save(learned)
        #expect(try store.load() == learned)
        try store.save(LearnedRooms())
        #expect(try store.load() == LearnedRooms())
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir) == ["learned-rooms.json"])
    }

    /// A write a crash cut short leaves its temporary file, a name of its own each time: the
    /// next write removes those over a minute old, and leaves a younger one (a write in progress).
    @Test func temporaryFilesOfCrashedWritesAreRemovedByTheNextWrite() throws {
        let dir = try directory()
        let store = LearnedRoomsStore(path: dir + "/learned-rooms.json")
        let old = dir + "/learned-rooms.json.tmp-41-crashed", young = dir + "/learned-rooms.json.tmp-42-writing"
        for leftover in [old, young] { #expect(FileManager.default.createFile(atPath: leftover, contents: Data("{".utf8))) }
        try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(-120)], ofItemAtPath: old)
        try store.save(learned)
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir).sorted() == ["learned-rooms.json", "learned-rooms.json.tmp-42-writing"])
    }

    @Test func aCorruptFileIsAnErrorNamingTheFileAndTheValue() throws {
        let dir = try directory()
        let path = dir + "/learned-rooms.json"
        try Data("{\"version\":1,\"rooms\":[{\"name\":\"kitchen\",\"seconds\":\"x\",\"nodes\":[]}]}".utf8).write(to: URL(fileURLWithPath: path))
        #expect {
            _ = try LearnedRoomsStore(path: path).load()
        } throws: { error in
            "\(error)" == "learned rooms '\(path)': rooms[0].seconds: expected a number"
        }
    }

    @Test func aFileThatCannotBeWrittenIsAnError() throws {
        let store = LearnedRoomsStore(path: "/nonexistent-roomcast-dir/learned-rooms.json")
        #expect { try store.save(learned) } throws: { "\($0)".contains("open failed") }
    }

    /// A room renamed (the pantry is now the office) and a node replaced since the rooms were
    /// taught: what was taught of them is not used, and the start says so, with what to do. What
    /// the config still has is not named.
    @Test func roomsAndNodesTaughtThatTheConfigNoLongerHasAreNamed() throws {
        var taught = learned
        taught.rooms.append(.init(name: "pantry", seconds: 30, nodes: [.init(node: "old-pi", seconds: 30, mean: -5, spread: 2)]))
        let warnings = try startWarnings(taught)
        #expect(warnings.count == 2, "\(warnings)")
        #expect(warnings.contains { $0.message.hasPrefix("rooms taught that the config no longer has") && $0.metadata["rooms"] == "pantry" })
        #expect(warnings.contains { $0.message.hasPrefix("nodes heard while teaching") && $0.metadata["nodes"] == "old-pi" })
    }

    /// The warnings of a start on the learning site with `taught` in its state file (which reads
    /// back as it was saved).
    func startWarnings(_ taught: LearnedRooms) throws -> [LogRecord] {
        let store = LearnedRoomsStore(path: try directory() + "/learned-rooms.json")
        try store.save(taught)
        #expect(try store.load() == taught)
        let records = InMemoryLogHandler()
        let site = AggregatorLearningTests.site
        let core = AggregatorCore(engine: FusionEngine(site: site), site: site, topics: Topics(), discovery: nil)
        _ = AggregatorRuntime(core: core, election: nil, refreshInterval: .infinity, startedAt: 1000, learnedStore: store,
                              logger: Logger(label: "test", level: .info, handler: records))
        return records.records(atLeast: .warning)
    }

    /// A node taught in one room and placed in another by the config since (a Pi moved): its
    /// taught levels are not used, and the start says which, and what to do.
    @Test func aNodeTaughtInAnotherRoomIsNamed() throws {
        let taught = LearnedRooms(rooms: [.init(name: "kitchen", seconds: 30, nodes: [
            .init(node: "kitchen-pi", seconds: 30, mean: -3, spread: 2, room: "kitchen"),
            .init(node: "office-pi", seconds: 30, mean: -19, spread: 2, room: "kitchen")])])
        let warnings = try startWarnings(taught)
        #expect(warnings.count == 1, "\(warnings)")
        #expect(warnings.first?.message.hasPrefix("nodes taught in another room") == true
                && warnings.first?.metadata["nodes"] == "office-pi (kitchen → office)")
        // Taught in a room the site no longer has: a rename, said as one (the room's warning).
        let renamed = LearnedRooms(rooms: [.init(name: "kitchen", seconds: 30, nodes: [
            .init(node: "office-pi", seconds: 30, mean: -19, spread: 2, room: "study")])])
        #expect(try startWarnings(renamed).isEmpty)
    }

    /// The service with a corrupt state file: it says so, never overwrites the file, and teaches
    /// nothing in this run. A label it took would be lost at the next start, and the learn state it
    /// published (empty, or holding only that label) would replace the retained one, the only
    /// other copy of what was taught. Each command is refused, saying why.
    @Test func theServiceLeavesACorruptFileAsItIs() async throws {
        let dir = try directory()
        let path = dir + "/learned-rooms.json"
        let corrupt = Data("{\"version\":1,\"rooms\":[".utf8)
        try corrupt.write(to: URL(fileURLWithPath: path))
        let records = InMemoryLogHandler()
        let logger = Logger(label: "test", level: .debug, handler: records)
        let site = AggregatorLearningTests.site
        let topics = Topics()
        let core = AggregatorCore(engine: FusionEngine(site: site), site: site, topics: topics, discovery: HomeAssistantDiscovery(topics: topics))
        let runtime = AggregatorRuntime(core: core, election: nil, refreshInterval: .infinity, startedAt: 1000,
                                        learnedStore: LearnedRoomsStore(path: path), logger: logger)
        #expect(records.records(atLeast: .error).contains { $0.message.hasPrefix("cannot read the learned rooms") })
        // What the run before published, retained: it is left as it is.
        let retained = LearnState(ts: 900, active: [], learned: learned)
        var out = await runtime.handle(topic: topics.aggregatorLearnState, payload: try WireFormat.encode(retained), now: 1000, retained: true)
        try await hear(runtime, at: 1000)
        let inputs = try AggregatorLearningTests.lines(from: 1004, to: 1020, commands: [
            (1005, LearnCommand(.label(room: "kitchen", beacon: AggregatorLearningTests.tag, seconds: 10)))])
        for line in inputs {
            out += await runtime.handle(topic: line.topic, payload: line.payload, now: line.ts)
            out += await runtime.tick(now: line.ts)
        }
        let results = out.filter { $0.topic == topics.aggregatorLearnResult }.compactMap { try? WireFormat.decode(LearnResult.self, from: $0.payload) }
        #expect(results.map(\.status) == [.rejected], "\(results)")
        #expect(results.first?.error?.contains("the state file \(path) could not be read at start") == true, "\(results)")
        // Said in the log too: a teaching select in Home Assistant reads no result topic.
        let refused = records.records(atLeast: .warning).filter { $0.message == "learn command refused" }
        #expect(refused.count == 1 && refused.first?.metadata["reason"]?.contains("could not be read at start") == true, "\(refused)")
        #expect(!out.contains { $0.topic == topics.aggregatorLearnState }, "a learn state was published over the retained one")
        #expect(await runtime.learnedRooms.room(named: "kitchen") == nil)
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == corrupt)
    }

    /// Under `partition:`, a partition whose state file could not be read refuses the commands
    /// it would answer, not those of the other partitions' rooms: they answer those themselves,
    /// and a refusal from here made `aggregator learn` report one while another partition taught.
    @Test func aPartitionWithoutItsStateFileLeavesTheOthersCommandsToThem() throws {
        let topics = Topics()
        let site = SiteModel(rooms: [.init(name: "kitchen", floor: 0), .init(name: "office", floor: 1)],
                             nodes: [.init(name: "kitchen-pi", room: "kitchen"), .init(name: "office-pi", room: "office")],
                             beacons: [.init(id: AggregatorLearningTests.tag, name: "Tag")])
        var core = AggregatorConfig(site: site, partition: .init(floors: [0])).makeCore()
        core.learningUnavailable("the state file /x could not be read at start: fix or move it away, then restart the aggregator")
        _ = try core.start(now: 100)
        func results(_ command: LearnCommand, at t: Double) throws -> [LearnResult] {
            try core.handle(topic: topics.aggregatorLearn, payload: command.encoded(), now: t).messages
                .filter { $0.topic == topics.aggregatorLearnResult }.compactMap { try? WireFormat.decode(LearnResult.self, from: $0.payload) }
        }
        #expect(try results(LearnCommand(.label(room: "office", beacon: AggregatorLearningTests.tag, seconds: 10)), at: 101).isEmpty)
        #expect(try results(LearnCommand(.forget(room: "office")), at: 102).isEmpty)
        #expect(try results(LearnCommand(.cancel(beacon: AggregatorLearningTests.tag)), at: 103).isEmpty)
        let own = try results(LearnCommand(.label(room: "kitchen", beacon: AggregatorLearningTests.tag, seconds: 10)), at: 104)
        #expect(own.map(\.status) == [.rejected] && own.first?.error?.hasPrefix("the state file /x could not be read") == true, "\(own)")
    }

    /// A state file that cannot be written is tried again every `LearnedRoomsPersistence.retryInterval`, not at
    /// every inbound message (each try creates and removes a file: on a full SD card, readings
    /// by the hundred a second), and `/metrics` counts the failures.
    @Test func aStateFileThatCannotBeWrittenIsRetriedEveryTenSeconds() async throws {
        let site = AggregatorLearningTests.site
        let core = AggregatorCore(engine: FusionEngine(site: site), site: site, topics: Topics(), discovery: nil)
        let runtime = AggregatorRuntime(core: core, election: nil, refreshInterval: .infinity, startedAt: 1000,
                                        learnedStore: LearnedRoomsStore(path: "/nonexistent-roomcast-dir/learned-rooms.json"),
                                        logger: Logger(label: "test", level: .critical, handler: InMemoryLogHandler()))
        try await hear(runtime, at: 1000)
        let inputs = try AggregatorLearningTests.lines(from: 1004, to: 1060, commands: [
            (1005, LearnCommand(.label(room: "kitchen", beacon: AggregatorLearningTests.tag, seconds: 10)))])
        var handled = 0
        for line in inputs {
            _ = await runtime.handle(topic: line.topic, payload: line.payload, now: line.ts)
            _ = await runtime.tick(now: line.ts)
            handled += 1
        }
        #expect(await runtime.learnedRooms.room(named: "kitchen") != nil, "taught, in memory")
        // The label ends about 1015; from then until 1060 a try every 10 s: 5 of them, against
        // 450 messages handled.
        let failures = await runtime.learnedSaveFailures
        #expect((4...6).contains(failures), "\(failures) failed writes over \(handled) messages")
        await runtime.persistLearnedAtStop(now: 1060.1)
        #expect(await runtime.learnedSaveFailures == failures + 1, "a graceful stop tries once more")
        let metrics = await runtime.metricsSample(now: 1061).render()
        #expect(metrics.contains("roomcast_state_file_failures_total \(failures + 1)"))
    }

    /// Where beacons leave from is kept too, not a write per person through the door: a count
    /// goes with the next write, which a room change of the published presence brings at most
    /// every `LearnedRoomsPersistence.placementsSaveInterval`, and with a graceful stop; a
    /// restart reads them back.
    @Test func departureCountsAreSavedAndReadBack() async throws {
        let dir = try directory()
        let store = LearnedRoomsStore(path: dir + "/learned-rooms.json")
        let site = AggregatorLearningTests.site
        func runtime() -> AggregatorRuntime<FusionEngine> {
            let core = AggregatorCore(engine: FusionEngine(site: site), site: site, topics: Topics(), discovery: nil)
            return AggregatorRuntime(core: core, election: nil, refreshInterval: .infinity, startedAt: 1000,
                                     learnedStore: store, logger: Logger(label: "test", level: .error, handler: InMemoryLogHandler()))
        }
        /// The tag heard in the kitchen over `from..<to`, then ticks through a silence until `until`;
        /// when it was shown away.
        func visit(_ r: AggregatorRuntime<FusionEngine>, from: Double, to: Double, until: Double) async throws -> Double? {
            for line in try AggregatorLearningTests.lines(from: from, to: to) {
                _ = await r.handle(topic: line.topic, payload: line.payload, now: line.ts)
                _ = await r.tick(now: line.ts)
            }
            var t = to, away: Double?
            while t < until {
                _ = await r.tickAnswered(now: t)
                if away == nil, await r.decision(for: AggregatorLearningTests.tag)?.room == nil { away = t - to }
                t += 0.5
            }
            return away
        }
        let first = runtime()
        try await hear(first, at: 1000)
        let firstAway = try await visit(first, from: 1000, to: 1020, until: 1070)
        #expect(firstAway ?? 0 > 25, "the away timeout, not seconds: first away after \(String(describing: firstAway)) s")
        // Written with the away, a minute after the tag's first room was.
        #expect(try store.load()?.departures == [.init(room: "kitchen", left: 1, returned: 0)])
        // The kitchen is an entrance now: the next silence there is leaving within seconds. Its
        // count waits for the next write (a minute after the return's), or the stop.
        let second = try #require(try await visit(first, from: 1100, to: 1120, until: 1160))
        #expect(second < 6)
        #expect(try store.load()?.departures == [.init(room: "kitchen", left: 1, returned: 0)])
        await first.persistLearnedAtStop(now: 1160)
        #expect(try store.load()?.departures == [.init(room: "kitchen", left: 2, returned: 0)])
        // After a restart the first silence in the kitchen is leaving within seconds too.
        let restarted = runtime()
        #expect(await restarted.learnedRooms.departures == [.init(room: "kitchen", left: 2, returned: 0)])
        try await hear(restarted, at: 1200)
        let third = try #require(try await visit(restarted, from: 1200, to: 1220, until: 1260))
        #expect(third < 6)
    }

    /// Connects the runtime and reads its drain marker back, as the broker would deliver it.
    func hear(_ runtime: AggregatorRuntime<FusionEngine>, at now: Double) async throws {
        await runtime.brokerConnected(now: now)
        let marker = try #require(await runtime.tick(now: now).first { $0.topic == runtime.syncTopic })
        _ = await runtime.handle(topic: marker.topic, payload: marker.payload, now: now)
    }
}
