import Foundation
import RoomcastAdvertising
import RoomcastHCI
import RoomcastMQTT
import Shared
import Synchronization
import Testing
import TestSupport
@testable import RoomcastAgent

/// A node connected to the broker whose radio does not listen (its adapter absent at boot, or
/// being reopened) says so: `offline`, and no heartbeat. Connected and sending heartbeats, it would
/// read as listening, and every beacon only it hears would go away after the away timeout.
@Suite(.serialized, .requiresMosquitto) struct RadioListeningTests {
    /// A live source whose adapter comes and goes as the test says; it delivers nothing.
    final class SwitchedSource: RadioSource {
        let spec = RadioSourceSpec.hci(device: "hci0")
        let reports: BoundedStream<AdvertisingReport>
        let producer: BoundedStream<AdvertisingReport>.Producer
        let counters = RadioCounters()
        let listening = Mutex(false)
        var terminationError: RadioError? { nil }
        var isListening: Bool { listening.withLock { $0 } }

        init() { (reports, producer) = BoundedStream<AdvertisingReport>.make(capacity: 8, mode: .lossless) }
        func start() async throws(RadioError) {}
        func shutdown() async { producer.finish() }
    }

    @Test func aNodeWhoseRadioDoesNotListenSaysItIsOffline() async throws {
        let broker = try await MosquittoBroker.start()
        let topics = Topics()
        let (observer, seen) = try await BrokerOutageTests.subscriber(port: broker.port)
        let will = MQTTMessage(topic: topics.nodeStatus("pi-1"), string: "offline", qos: .atLeastOnce, retain: true)
        let client = try MQTTClient(configuration: MQTTClientConfiguration(
            host: "127.0.0.1", port: broker.port, clientID: "agent-pi-1", lastWill: will,
            reconnectBackoff: MQTTBackoff(initial: 0.1, maximum: 0.5)), logger: .silent)
        let source = SwitchedSource()
        let service = EdgeAgentService(settings: AgentSettings(node: "pi-1"), decoder: try AdvertisementDecoder(), source: source,
                                       sink: MQTTSink(client: client, logger: .silent), mqtt: client, logger: .silent)
        let run = Task { try? await service.run() }
        // Each change, once: the status also goes out again when the broker connects.
        func statuses() -> [String] {
            seen.elements.filter { $0.topic == topics.nodeStatus("pi-1") }.map { String(decoding: $0.payload, as: UTF8.self) }
                .reduce(into: [String]()) { changes, s in if changes.last != s { changes.append(s) } }
        }
        func heartbeats() -> Int { seen.elements.count { $0.topic == topics.nodeHeartbeat("pi-1") } }

        // The adapter is not there at start: offline, and two seconds of no heartbeat.
        try await seen.waitFor("the status", timeout: .seconds(30)) { _ in !statuses().isEmpty }
        #expect(statuses() == ["offline"])
        try await Task.sleep(for: .seconds(2.5))
        #expect(heartbeats() == 0)
        #expect(statuses() == ["offline"])

        // It opens: online, and heartbeats.
        source.listening.withLock { $0 = true }
        try await seen.waitFor("online and a heartbeat", timeout: .seconds(30)) { _ in statuses().last == "online" && heartbeats() >= 2 }

        // It closes (lost, or reopened after a stall): offline once that has lasted 3 s, and the
        // heartbeats stop.
        source.listening.withLock { $0 = false }
        try await seen.waitFor("offline again", timeout: .seconds(30)) { _ in statuses().last == "offline" }
        let after = heartbeats()
        try await Task.sleep(for: .seconds(2.5))
        #expect(heartbeats() == after)
        #expect(statuses() == ["offline", "online", "offline"])

        // Back: online.
        source.listening.withLock { $0 = true }
        try await seen.waitFor("online again", timeout: .seconds(30)) { _ in statuses().last == "online" && heartbeats() > after }

        await service.stop()
        _ = await run.value
        await observer.shutdown()
        await broker.cleanup()
    }

    /// Keeps every message sent, in order.
    final class KeepingSink: AgentSink {
        private let kept = Mutex<[OutboundMessage]>([])
        func send(_ messages: [OutboundMessage], at ts: Double) { kept.withLock { $0 += messages } }
        var messages: [OutboundMessage] { kept.withLock { $0 } }
        var dropped: UInt64 { 0 }
        var reconnects: UInt64 { 0 }
        func shutdown(final: OutboundMessage?, at ts: Double) async {}
    }

    /// The radio opens and hears a beacon before the once-a-second look: the node says it is
    /// online before its first reading, which the aggregator would otherwise take for a node
    /// back against its `offline`.
    @Test func theFirstReportAfterTheRadioOpensGoesOutAfterOnline() throws {
        let sink = KeepingSink()
        let core = AgentCore(settings: AgentSettings(node: "pi-1"), decoder: try AdvertisementDecoder(), startTime: 100)
        let runtime = AgentRuntime(core: core, sink: sink, counters: nil, ticksFromReports: false, startTime: 100)
        runtime.start(now: 100, listening: false)
        runtime.handle(AdvertisingReport(address: [0xC8, 0x1F, 0x66, 0x0A, 0x1B, 0x2C], addressType: .public,
                                         eventType: AdvertisingEventType(legacy: 0x03), rssi: -60,
                                         data: CaptureBuilder.iBeacon(major: 1, minor: 2), timestamp: 100.4))
        let status = Topics().nodeStatus("pi-1")
        let order = sink.messages.filter { $0.topic == status || $0.topic.contains("/beacons/") }
            .map { $0.topic == status ? String(decoding: $0.payload, as: UTF8.self) : "reading" }
        #expect(order == ["offline", "online", "reading"], "\(order)")
    }

    /// The radio closes for longer than the exit delay: the node says it is offline, and its
    /// regions end with that, as at a stop. It sent an exit at the delay for every region it was
    /// in, though nothing left, and then, as the radio came back, no `enter`; a consumer that
    /// ended the region at `offline`, as docs/mqtt-api.md says, kept it ended. Once it hears
    /// again, the beacon's first advertisement is an `enter`.
    @Test func aRadioThatClosesEndsItsRegionsWithoutAnExit() throws {
        let sink = KeepingSink()
        var config = AdvertisingConfig()
        config.regions = [RegionConfig(name: "office", uuid: CaptureBuilder.uuid.lowercased())]
        let core = AgentCore(settings: AgentSettings(node: "pi-1", regionExitDelay: 30), decoder: try AdvertisementDecoder(config: config),
                             startTime: 100)
        let runtime = AgentRuntime(core: core, sink: sink, counters: nil, ticksFromReports: false, startTime: 100)
        func hear(at t: Double) {
            runtime.handle(AdvertisingReport(address: [0xC8, 0x1F, 0x66, 0x0A, 0x1B, 0x2C], addressType: .public,
                                             eventType: AdvertisingEventType(legacy: 0x03), rssi: -60,
                                             data: CaptureBuilder.iBeacon(major: 1, minor: 2), timestamp: t))
        }
        func events() throws -> [RegionEvent.Kind] {
            try sink.messages.filter { $0.topic == Topics().nodeEvents("pi-1") }.map { try WireFormat.decode(RegionEvent.self, from: $0.payload).event }
        }
        runtime.start(now: 100, listening: true)
        hear(at: 100.4)
        #expect(try events() == [.enter])
        for t in stride(from: 101.0, through: 150, by: 1) {
            runtime.radio(listening: false, now: t)
            runtime.tick(now: t)
        }
        #expect(try events() == [.enter], "no exit while the radio heard nothing")
        runtime.radio(listening: true, now: 151)
        hear(at: 151.4)
        #expect(try events() == [.enter, .enter], "heard again: an enter")
        // A real exit still comes, the delay after the beacon was last heard.
        for t in stride(from: 152.0, through: 185, by: 1) { runtime.tick(now: t) }
        #expect(try events() == [.enter, .enter, .exit])
    }
}
