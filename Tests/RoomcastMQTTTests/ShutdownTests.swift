import Foundation
import RoomcastMQTT
import Shared
import Testing
import TestSupport

@Suite(.requiresMosquitto, .timeLimit(.minutes(2)))
struct ShutdownTests {
    @Test func shutdownIsIdempotentAndFinishesTheStreams() async throws {
        try await withRig { rig in
            let c = try await rig.connectedClient("twice")
            let events = StreamCollector(c.connectionEvents)
            let inbox = StreamCollector(c.messages)
            async let a: Void = c.shutdown()
            async let b: Void = c.shutdown()
            _ = await (a, b)
            await c.shutdown()
            try await events.waitForFinish()
            try await inbox.waitForFinish()
            #expect(events.elements.last == .disconnected(reason: .shutDown))
            #expect(!c.isConnected)
            #expect(throws: MQTTError.shutDown) { try c.publish(MQTTMessage(topic: "t", string: "late")) }
            await #expect(throws: MQTTError.shutDown) { try await c.waitUntilConnected(timeout: .seconds(1)) }
            await #expect(throws: MQTTError.shutDown) { try await c.subscribe("t") }
        }
    }

    @Test func shutdownWorksBeforeStartAndWhileRetrying() async throws {
        let never = try MQTTClient(configuration: .testing(port: 1, id: "never"), logger: .silent)
        await never.shutdown()
        await never.shutdown()

        let nobody = try RefusingPort()
        defer { withExtendedLifetime(nobody) {} }
        var cfg = MQTTClientConfiguration.testing(port: nobody.port, id: "retrying")
        cfg.reconnectBackoff = MQTTBackoff(initial: 30, maximum: 30, jitter: 0)
        let retrying = try MQTTClient(configuration: cfg, logger: .silent)
        let events = StreamCollector(retrying.connectionEvents)
        retrying.start()
        try await events.waitFor("a failed attempt") { !$0.isEmpty }
        // Shutdown wakes the 30 s backoff wait instead of sitting it out.
        try await withTimeout(.seconds(5), "shutdown during a backoff wait") { await retrying.shutdown() }
        try await events.waitForFinish()
    }

    @Test func finalMessageAndQueuedQoS1MessagesReachTheBroker() async throws {
        try await withRig { rig in
            let watcher = try await rig.connectedClient("watcher")
            try await watcher.subscribe("flush/#")
            let inbox = StreamCollector(watcher.messages)

            let node = try await rig.connectedClient("node")
            let count = 300 // far beyond libmosquitto's 20 in flight: most wait in its queue at shutdown
            for i in 0..<count { try node.publish(MQTTMessage(topic: "flush/\(i)", string: "\(i)", qos: .atLeastOnce)) }
            await node.shutdown(publishing: MQTTMessage(topic: "flush/status", string: "offline", qos: .atLeastOnce, retain: true))

            let got = try await inbox.waitFor("all \(count) messages and the final one") { $0.count >= count + 1 }
            #expect(got.count == count + 1)
            #expect(got.dropLast().map(\.payloadString) == (0..<count).map { "\($0)" })
            #expect(got.last?.payloadString == "offline")
            #expect(node.publishFailures == 0)

            // The final message was retained: a later subscriber sees the node offline.
            let late = try await rig.connectedClient("late")
            let lateInbox = StreamCollector(late.messages)
            try await late.subscribe("flush/status")
            let retained = try await lateInbox.waitFor("the retained status") { !$0.isEmpty }
            #expect(retained.first?.payloadString == "offline")
            #expect(retained.first?.retain == true)
        }
    }

    /// The final message cannot be queued (the broker stopped acknowledging: the queue is
    /// full). A clean DISCONNECT then cancelled the Last Will too, and the retained status said
    /// `online` for good. Now the connection closes without one, and the broker publishes the will.
    @Test func aFinalMessageThatCannotBeSentLeavesItToTheLastWill() async throws {
        try await withRig { rig in
            let watcher = try await rig.connectedClient("watcher")
            try await watcher.subscribe("status/#")
            let inbox = StreamCollector(watcher.messages)
            let node = try await rig.connectedClient("node") { c in
                c.lastWill = MQTTMessage(topic: "status/node", string: "offline (will)", qos: .atLeastOnce, retain: true)
                c.outboundQueueLimit = 1
            }
            rig.broker.pause()
            try node.publish(MQTTMessage(topic: "status/reading", string: "held", qos: .atLeastOnce))
            await node.shutdown(publishing: MQTTMessage(topic: "status/node", string: "offline", qos: .atLeastOnce, retain: true),
                                timeout: .seconds(1))
            rig.broker.resume()
            // Resumed, a broker on a loaded machine (the whole suite running) took 7 to 12 s here
            // to act on the closed connection.
            let got = try await inbox.waitFor("the will", timeout: .seconds(40)) { $0.contains { $0.topic == "status/node" } }
            #expect(got.filter { $0.topic == "status/node" }.map(\.payloadString) == ["offline (will)"])
        }
    }
}
