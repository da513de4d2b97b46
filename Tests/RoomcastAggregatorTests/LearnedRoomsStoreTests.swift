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

    /// The service with a corrupt state file: it says so, learns in memory, and never
    /// overwrites the file.
    @Test func theServiceLeavesACorruptFileAsItIs() async throws {
        let dir = try directory()
        let path = dir + "/learned-rooms.json"
        let corrupt = Data("{\"version\":1,\"rooms\":[".utf8)
        try corrupt.write(to: URL(fileURLWithPath: path))
        let records = InMemoryLogHandler()
        let logger = Logger(label: "test", level: .debug, handler: records)
        let site = AggregatorLearningTests.site
        let core = AggregatorCore(engine: FusionEngine(site: site), site: site, topics: Topics(), discovery: nil)
        let runtime = AggregatorRuntime(core: core, election: nil, refreshInterval: .infinity, startedAt: 1000,
                                        learnedStore: LearnedRoomsStore(path: path), logger: logger)
        #expect(records.records(atLeast: .error).contains { $0.message.hasPrefix("cannot read the learned rooms") })
        try await hear(runtime, at: 1000)
        let inputs = try AggregatorLearningTests.lines(from: 1004, to: 1020, commands: [
            (1005, LearnCommand(.label(room: "kitchen", beacon: AggregatorLearningTests.tag, seconds: 10)))])
        var out: [OutboundMessage] = []
        for line in inputs {
            out += await runtime.handle(topic: line.topic, payload: line.payload, now: line.ts)
            out += await runtime.tick(now: line.ts)
        }
        #expect(out.contains { $0.topic == Topics().aggregatorLearnResult && String(decoding: $0.payload, as: UTF8.self).contains("\"learned\"") })
        #expect(await runtime.learnedRooms.room(named: "kitchen") != nil)
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == corrupt)
        #expect(records.records(atLeast: .error).contains { $0.message.hasPrefix("learned rooms not saved") })
    }

    /// Connects the runtime and reads its drain marker back, as the broker would deliver it.
    func hear(_ runtime: AggregatorRuntime<FusionEngine>, at now: Double) async throws {
        await runtime.brokerConnected(now: now)
        let marker = try #require(await runtime.tick(now: now).first { $0.topic == runtime.syncTopic })
        _ = await runtime.handle(topic: marker.topic, payload: marker.payload, now: now)
    }
}
