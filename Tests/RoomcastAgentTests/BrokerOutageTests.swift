import Foundation
import RoomcastAdvertising
import RoomcastHCI
import RoomcastLogging
import RoomcastMQTT
import Shared
import Synchronization
import Testing
import TestSupport
@testable import RoomcastAgent

/// The agent against a real mosquitto and a scripted H4 controller that
/// advertises one iBeacon at 20 Hz: scanning goes on through a broker outage,
/// nothing captured during it is published later, and the current state goes
/// out on reconnect; an agent started before its broker exists connects later.
@Suite(.serialized, .requiresMosquitto) struct BrokerOutageTests {
    static let beacon = CaptureBuilder.iBeacon(major: 7, minor: 8)
    static let topicPrefix = "roomcast/nodes/pi-1/"

    struct Rig {
        let fake: ScriptedH4Controller
        let agentClient: MQTTClient
        let service: EdgeAgentService
        let sink: MQTTSink
        let run: Task<AgentCore.Stats?, Never>
        let radio: Task<Void, Never>
        let logs: InMemoryLogHandler

        func stop() async {
            radio.cancel()
            await service.stop()
            _ = await run.value
            fake.stop()
        }
    }

    static func startAgent(port: Int) throws -> Rig {
        let fake = try ScriptedH4Controller()
        let settings = AgentSettings(node: "pi-1", reportInterval: 0.5)
        let will = MQTTMessage(topic: settings.topics.nodeStatus("pi-1"), string: "offline", qos: .atLeastOnce, retain: true)
        let logs = InMemoryLogHandler()
        let client = try MQTTClient(configuration: MQTTClientConfiguration(
            host: "127.0.0.1", port: port, clientID: "agent-pi-1", lastWill: will,
            reconnectBackoff: MQTTBackoff(initial: 0.1, maximum: 0.5)), logger: Logger(label: "agent", level: .info, handler: logs))
        let sink = MQTTSink(client: client, logger: .silent)
        let source = RadioSourceFactory.make(.h4(path: fake.path, baud: nil),
                                       options: RadioOptions(recovery: RecoveryPolicy(stallTimeout: 30), commandTimeout: 2))
        let service = EdgeAgentService(settings: settings, decoder: try AdvertisementDecoder(), source: source, sink: sink,
                                       mqtt: client, logger: Logger(label: "agent", level: .info, handler: logs))
        let run = Task { try? await service.run() }
        let radio = Task {
            var i = 0
            while !Task.isCancelled {
                fake.emit([.init(address: [0xC0, 1, 2, 3, 4, 5], rssi: Int8(-60 - i % 4), data: beacon)])
                i += 1
                try? await Task.sleep(for: .milliseconds(50))  // the beacon's advertising interval
            }
        }
        return Rig(fake: fake, agentClient: client, service: service, sink: sink, run: run, radio: radio, logs: logs)
    }

    static func subscriber(port: Int) async throws -> (MQTTClient, StreamCollector<MQTTMessage>) {
        let client = try MQTTClient(configuration: MQTTClientConfiguration(
            host: "127.0.0.1", port: port, clientID: "observer-\(UUID().uuidString.prefix(8))",
            reconnectBackoff: MQTTBackoff(initial: 0.1, maximum: 0.5)), logger: .silent)
        let collector = StreamCollector(client.messages)
        client.start()
        try await client.subscribe("roomcast/nodes/#", qos: .atLeastOnce)
        return (client, collector)
    }

    static func readingTimes(_ messages: [MQTTMessage]) -> [Double] {
        messages.filter { $0.topic.hasPrefix(topicPrefix + "beacons/") }
            .compactMap { try? WireFormat.decode(BeaconReading.self, from: $0.payload).ts }
    }

    /// A region event decided while the broker is away is sent once it is back, with its own
    /// time and before what is decided after; a reading from the outage is not. The exit was
    /// dropped, and a dashboard showed the region occupied until the next enter.
    @Test func anEventDecidedDuringAnOutageIsSentOnReconnect() async throws {
        let broker = try await MosquittoBroker.start()
        let client = try MQTTClient(configuration: MQTTClientConfiguration(
            host: "127.0.0.1", port: broker.port, clientID: "agent-pi-1", reconnectBackoff: MQTTBackoff(initial: 0.1, maximum: 0.5)),
                                    logger: .silent)
        let sink = MQTTSink(client: client, logger: .silent)
        client.start()
        try await client.waitUntilConnected(timeout: .seconds(30))
        let topics = Topics()
        func event(_ kind: String, at ts: Double) -> OutboundMessage {
            var m = OutboundMessage(topic: topics.nodeEvents("pi-1"), text: #"{"event":"\#(kind)","region":"office-tags","ts":\#(ts)}"#, qos: 1)
            m.heldThroughOutage = true
            return m
        }
        func reading(_ ts: Double) -> OutboundMessage {
            OutboundMessage(topic: Self.topicPrefix + "beacons/ibeacon:x", text: #"{"ts":\#(ts)}"#, qos: 0)
        }
        await broker.stop()
        try await eventually("the client sees the outage", timeout: .seconds(30)) { !client.isConnected }
        // A reading at QoS 1 (the delivery check raises one a minute) is no event: not held.
        var checked = reading(100)
        checked.qos = 1
        sink.send([event("exit", at: 100), checked], at: 100)
        #expect(sink.heldEventCount == 1)
        try await broker.startAgain()
        try await client.waitUntilConnected(timeout: .seconds(30))
        let (observer, seen) = try await Self.subscriber(port: broker.port)
        // The observer's subscription is in place once a probe sent past the sink reaches it.
        try await eventually("the observer subscribed", timeout: .seconds(30)) {
            try? client.publish(MQTTMessage(topic: Self.topicPrefix + "probe", string: "p", qos: .atMostOnce, retain: false))
            try? await Task.sleep(for: .milliseconds(50))
            return seen.elements.contains { $0.topic.hasSuffix("/probe") }
        }
        #expect(sink.heldEventCount == 1, "held until the sink sends again")
        sink.send([event("enter", at: 200), reading(200)], at: 200)
        try await seen.waitFor("both events", timeout: .seconds(30)) { all in
            all.filter { $0.topic == topics.nodeEvents("pi-1") }.count == 2
        }
        let events = seen.elements.filter { $0.topic == topics.nodeEvents("pi-1") }.map(\.payload)
        #expect(events == [event("exit", at: 100).payload, event("enter", at: 200).payload], "in order, each with its own time")
        #expect(!seen.elements.contains { $0.payload == reading(100).payload }, "no reading from the outage")
        #expect(seen.elements.contains { $0.payload == reading(200).payload })
        #expect(sink.heldEventCount == 0)
        await observer.shutdown()
        await client.shutdown()
        await broker.cleanup()
    }

    @Test func scanningGoesOnThroughAnOutageAndNothingStaleIsSentLater() async throws {
        let broker = try await MosquittoBroker.start()
        let rig = try Self.startAgent(port: broker.port)
        let (observer, seen) = try await Self.subscriber(port: broker.port)
        // A bound, not a pace: under the sanitizer's parallel run, starting the agent on the
        // scripted controller once took over 30 s.
        try await seen.waitFor("a first reading", timeout: .seconds(90)) { !Self.readingTimes($0).isEmpty }

        await broker.stop()
        let downAt = Date().timeIntervalSince1970
        let droppedBefore = rig.sink.dropped
        // Scanning goes on: the agent keeps ranging and drops (counts) what it cannot send.
        try await eventually("readings dropped while the broker is down", timeout: .seconds(30)) {
            rig.sink.dropped >= droppedBefore + 4
        }
        let upAt = Date().timeIntervalSince1970
        let before = seen.elements.count
        try await broker.startAgain()

        let after = try await seen.waitFor("online again and a fresh reading", timeout: .seconds(30)) { all in
            let new = Array(all.dropFirst(before))
            return new.contains { $0.topic == Self.topicPrefix + "status" && $0.payloadString == "online" }
                && Self.readingTimes(new).contains { $0 >= upAt }
        }
        let stale = Self.readingTimes(after).filter { $0 > downAt + 0.5 && $0 < upAt - 0.5 }
        #expect(stale.isEmpty, "readings captured during the outage must never be sent later: \(stale)")
        #expect(rig.agentClient.reconnects >= 1)
        // The outage was logged as one line, by the client alone; the agent's own stop is none.
        let lost = { rig.logs.records.filter { $0.level >= .warning && $0.message.contains("connection lost") }.map(\.message) }
        #expect(lost() == ["mqtt connection lost"])
        await rig.stop()
        #expect(lost() == ["mqtt connection lost"], "a graceful stop is no lost connection")
        await observer.shutdown()
        await broker.cleanup()
    }

    @Test func anAgentStartedBeforeItsBrokerConnectsWhenItAppears() async throws {
        let nobody = try RefusingPort()
        let port = nobody.port
        let rig = try Self.startAgent(port: port)
        // The agent is scanning with no broker at all.
        try await eventually("drops while no broker exists", timeout: .seconds(30)) { rig.sink.dropped >= 2 }
        nobody.release()
        let broker = try await MosquittoBroker.start(.init(port: port))
        let (observer, seen) = try await Self.subscriber(port: port)
        // Status, telemetry and readings. The status is retained; the telemetry the agent sends
        // on connecting is not, and it may go out before the observer subscribes, so the
        // periodic one (every 30 s) counts as well.
        try await seen.waitFor("status, telemetry and a reading", timeout: .seconds(90)) { all in
            all.contains { $0.topic == Self.topicPrefix + "status" && $0.payloadString == "online" }
                && all.contains { $0.topic == Self.topicPrefix + "telemetry" }
                && !Self.readingTimes(all).isEmpty
        }
        await rig.stop()
        // A clean stop publishes offline (retained) before disconnecting.
        try await seen.waitFor("offline after a clean stop", timeout: .seconds(30)) { $0.last { $0.topic == Self.topicPrefix + "status" }?.payloadString == "offline" }
        await observer.shutdown()
        await broker.cleanup()
    }
}
