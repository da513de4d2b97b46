import RoomcastFusion
import RoomcastLogging
import Shared
import Testing
@testable import RoomcastAggregator

/// An aggregator that hears no node at all (the agents on another broker or topic prefix, an
/// account the broker's ACL does not let read the nodes' topics) placed nothing, published nobody
/// away, and said nothing: `/healthz` answered ok. Two minutes after connecting it says so, in
/// the log and on `/healthz`, and says when a node is heard at last.
@Suite struct FirstNodeWaitTests {
    static let topics = Topics()

    static func runtime(_ records: InMemoryLogHandler) -> AggregatorRuntime<FusionEngine> {
        AggregatorRuntime(core: AggregatorConfig(site: site, discovery: .init(enabled: false)).makeCore(), election: nil,
                          refreshInterval: .infinity, startedAt: 0, logger: Logger(label: "test", level: .info, handler: records))
    }

    static func noneHeardLines(_ records: InMemoryLogHandler) -> [LogRecord] {
        records.records.filter { $0.message.hasPrefix("no node heard since connecting") }
    }

    @Test func anAggregatorThatHearsNoNodeSaysSoAndWhenOneIsHeard() async throws {
        let records = InMemoryLogHandler()
        let runtime = Self.runtime(records)
        await runtime.brokerConnected(now: 10)
        for t in stride(from: 10.5, through: 129, by: 0.5) { _ = await runtime.tickAnswered(now: t) }
        #expect(Self.noneHeardLines(records).isEmpty, "within the patience")
        #expect(await runtime.metricsSample(now: 129).noNodeHeard == false)
        for t in stride(from: 129.5, through: 600, by: 0.5) { _ = await runtime.tickAnswered(now: t) }
        let lines = Self.noneHeardLines(records)
        #expect(lines.count == 1 && lines.first?.level == .error, "\(lines.map(\.message))")
        #expect(lines.first?.metadata["hint"]?.contains("roomcast/nodes/#") == true)
        #expect(await runtime.metricsSample(now: 600).noNodeHeard)

        // A node's retained status arrives (the ACL mended, the agents pointed at this broker).
        _ = await runtime.handle(topic: Self.topics.nodeStatus("kitchen-pi"), payload: Array("online".utf8), now: 600.2)
        _ = await runtime.tickAnswered(now: 600.5)
        #expect(records.records.filter { $0.message == "a node is heard at last" }.count == 1)
        #expect(await runtime.metricsSample(now: 601).noNodeHeard == false)
        for t in stride(from: 601, through: 2000, by: 0.5) { _ = await runtime.tickAnswered(now: t) }
        #expect(Self.noneHeardLines(records).count == 1, "nothing more once a node is heard")
    }

    /// A site whose nodes are heard, however late in the patience, and one still not heard an
    /// hour on: said at two minutes, then ever further apart, not every tick.
    @Test func aHeardSiteSaysNothingAndAnUnheardOneIsNotSaidAtEveryTick() async throws {
        let heardLate = InMemoryLogHandler()
        let runtime = Self.runtime(heardLate)
        await runtime.brokerConnected(now: 0)
        for t in stride(from: 0.5, through: 900, by: 0.5) {
            if t >= 100, t.truncatingRemainder(dividingBy: 1) == 0 {
                _ = await runtime.handle(topic: Self.topics.nodeHeartbeat("office-pi"), payload: try WireFormat.encode(NodeHeartbeat(ts: t)), now: t)
            }
            _ = await runtime.tickAnswered(now: t)
        }
        #expect(Self.noneHeardLines(heardLate).isEmpty && !heardLate.records.contains { $0.message == "a node is heard at last" })

        let unheard = InMemoryLogHandler()
        let silent = Self.runtime(unheard)
        await silent.brokerConnected(now: 0)
        for t in stride(from: 1.0, through: 4 * 3600, by: 1) { _ = await silent.tickAnswered(now: t) }
        let lines = Self.noneHeardLines(unheard)
        #expect((3...8).contains(lines.count), "\(lines.count) lines in four hours")
    }
}
