import RoomcastFusion
import RoomcastLogging
import Shared
import Testing
import TestSupport
@testable import RoomcastAggregator

/// An aggregator that hears no node at all (the agents on another broker or topic prefix, an
/// account the broker's ACL does not let read the nodes' topics, every node off) places nothing
/// and publishes nobody away. Two minutes of listening after connecting without a live message
/// from a node, it says so in the log and on `/healthz`, and says when a node is heard at last.
@Suite struct FirstNodeWaitTests {
    static let topics = Topics()

    static func runtime(_ records: InMemoryLogHandler) -> AggregatorRuntime<FusionEngine> {
        AggregatorRuntime(core: AggregatorConfig(site: site, discovery: .init(enabled: false)).makeCore(), election: nil,
                          refreshInterval: .infinity, startedAt: 0, logger: Logger(label: "test", level: .info, handler: records))
    }

    /// A runtime logging to a handler of its own, connected at `time`.
    static func connected(at time: Double) async -> (AggregatorRuntime<FusionEngine>, InMemoryLogHandler) {
        let records = InMemoryLogHandler()
        let runtime = runtime(records)
        await runtime.brokerConnected(now: time)
        return (runtime, records)
    }

    static func noneHeardLines(_ records: InMemoryLogHandler) -> [LogRecord] {
        records.records.filter { $0.message.hasPrefix("no node heard since connecting") }
    }

    /// Ticks at `times`; from `heartbeatsFrom` on, the office's node beats every whole second.
    static func ticks(_ runtime: AggregatorRuntime<FusionEngine>, _ times: StrideThrough<Double>,
                      heartbeatsFrom: Double = .infinity) async {
        for t in times {
            if t >= heartbeatsFrom, t.truncatingRemainder(dividingBy: 1) == 0, let beat = try? WireFormat.encode(NodeHeartbeat(ts: t)) {
                _ = await runtime.handle(topic: topics.nodeHeartbeat("office-pi"), payload: beat, now: t)
            }
            _ = await runtime.tickAnswered(now: t)
        }
    }

    @Test func anAggregatorThatHearsNoNodeSaysSoAndWhenOneIsHeard() async throws {
        let (runtime, records) = await Self.connected(at: 10)
        // A retained status is no sign the node is still on this broker.
        _ = await runtime.handle(topic: Self.topics.nodeStatus("kitchen-pi"), payload: Array("offline".utf8), now: 10.1, retained: true)
        await Self.ticks(runtime, stride(from: 10.5, through: 129, by: 0.5))
        #expect(Self.noneHeardLines(records).isEmpty, "within the patience")
        #expect(await runtime.metricsSample(now: 129).noNodeHeard == false)
        await Self.ticks(runtime, stride(from: 129.5, through: 600, by: 0.5))
        let lines = Self.noneHeardLines(records)
        #expect(lines.count == 1 && lines.first?.level == .error, "\(lines.map(\.message))")
        #expect(lines.first?.metadata["mqtt.topics"]?.contains("roomcast/nodes/+/heartbeat") == true)
        #expect(await runtime.metricsSample(now: 600).noNodeHeard)

        // /healthz says so beside ok: the runtime answers, the nodes' messages do not arrive.
        let (http, port) = try DashboardRoomsTests.serve(.init(snapshot: { await runtime.dashboardSnapshot(now: 600, connected: true) },
                                                               metrics: { await runtime.metricsSample(now: 600) }))
        // A loaded machine may keep the runtime from answering within the 3 s the route waits: that
        // answer is a 503, asked again.
        var health = (status: 0, body: "")
        try await eventually("/healthz answered", timeout: .seconds(60), poll: .milliseconds(200)) {
            health = (try? await LocalHTTP.get(port, "/healthz")) ?? (0, "")
            return health.status == 200
        }
        http.shutdown()
        #expect(health.status == 200 && health.body.hasPrefix("ok\n") && health.body.contains("nodes: none heard since connecting"),
                "\(health.body)")

        // A node's heartbeat arrives (the ACL mended, the agents pointed at this broker).
        _ = await runtime.handle(topic: Self.topics.nodeHeartbeat("kitchen-pi"), payload: try WireFormat.encode(NodeHeartbeat(ts: 600.2)),
                                 now: 600.2)
        _ = await runtime.tickAnswered(now: 600.5)
        #expect(records.records.filter { $0.message == "a node is heard at last" }.count == 1)
        #expect(await runtime.metricsSample(now: 601).noNodeHeard == false)
        await Self.ticks(runtime, stride(from: 601, through: 2000, by: 0.5))
        #expect(Self.noneHeardLines(records).count == 1, "nothing more once a node is heard")
    }

    /// A site whose nodes are heard, however late in the patience, and one still not heard four
    /// hours on: said at two minutes, then ever further apart, not every tick.
    @Test func aHeardSiteSaysNothingAndAnUnheardOneIsNotSaidAtEveryTick() async throws {
        let (runtime, heardLate) = await Self.connected(at: 0)
        await Self.ticks(runtime, stride(from: 0.5, through: 900, by: 0.5), heartbeatsFrom: 100)
        #expect(Self.noneHeardLines(heardLate).isEmpty && !heardLate.records.contains { $0.message == "a node is heard at last" })

        let (silent, unheard) = await Self.connected(at: 0)
        await Self.ticks(silent, stride(from: 1.0, through: 4 * 3600, by: 1))
        let lines = Self.noneHeardLines(unheard)
        #expect((3...8).contains(lines.count), "\(lines.count) lines in four hours")
    }

    /// A Pi without a clock battery: NTP steps the wall clock hours forward just after the
    /// aggregator connected. The step is no time the nodes had to be heard in.
    @Test func aClockSteppedForwardIsNoTimeListened() async throws {
        let (runtime, records) = await Self.connected(at: 10)
        await Self.ticks(runtime, stride(from: 10.5, through: 20, by: 0.5))
        await Self.ticks(runtime, stride(from: 20_000, through: 20_060, by: 0.5))
        #expect(Self.noneHeardLines(records).isEmpty, "\(records.records.map(\.message))")
        await Self.ticks(runtime, stride(from: 20_060.5, through: 20_200, by: 0.5))
        #expect(Self.noneHeardLines(records).count == 1, "two minutes of listening, whatever the clock did")
    }

    /// Each connection waits afresh: an ACL changed while the aggregator ran takes effect at the
    /// broker's restart, after which nothing of the nodes arrives.
    @Test func aReconnectWaitsAfresh() async throws {
        let (runtime, records) = await Self.connected(at: 0)
        await Self.ticks(runtime, stride(from: 0.5, through: 300, by: 0.5), heartbeatsFrom: 0)
        await runtime.brokerDisconnected()
        await runtime.brokerConnected(now: 310)
        await Self.ticks(runtime, stride(from: 310.5, through: 600, by: 0.5))
        #expect(Self.noneHeardLines(records).count == 1, "\(records.records.map(\.message))")
    }
}
