import Foundation
import RoomcastMQTT
import Testing
import TestSupport

/// TestSupport's broker harness itself: other suites rely on these behaviours.
@Suite(.requiresMosquitto, .timeLimit(.minutes(1)))
struct BrokerSupportTests {
    @Test func restartKeepsThePortAndKillStopsAtOnce() async throws {
        let broker = try await MosquittoBroker.start()
        let port = broker.port
        try await broker.restart()
        #expect(broker.port == port)
        #expect(acceptsConnections(port: port))
        await broker.kill()
        #expect(!broker.isRunning)
        #expect(!acceptsConnections(port: port))
        try await broker.startAgain()
        #expect(acceptsConnections(port: port))
        await broker.cleanup()
        #expect(!FileManager.default.fileExists(atPath: broker.directory))
    }

    /// A broker that does not answer SIGTERM is killed after the grace, and the test goes on:
    /// here it is frozen; mosquitto also loses a SIGTERM that lands just before its main loop
    /// starts, which held a whole test run once.
    @Test func stopKillsABrokerThatDoesNotAnswerSIGTERM() async throws {
        let broker = try await MosquittoBroker.start()
        broker.pause()
        await broker.stop()
        #expect(!broker.isRunning)
        #expect(!acceptsConnections(port: broker.port))
        await broker.cleanup()
    }

    @Test func extraConfigCanBridgeTwoBrokers() async throws {
        let upstream = try await MosquittoBroker.start()
        let edge = try await MosquittoBroker.start(.init(extraConfig: [
            "connection to-upstream",
            "address 127.0.0.1:\(upstream.port)",
            "topic roomcast/# out 1",
            "restart_timeout 1",
        ]))
        let listener = try MQTTClient(configuration: .testing(port: upstream.port, id: "up"), logger: .silent)
        let local = try MQTTClient(configuration: .testing(port: edge.port, id: "edge"), logger: .silent)
        do {
            listener.start()
            local.start()
            try await listener.waitUntilConnected(timeout: .seconds(10))
            try await local.waitUntilConnected(timeout: .seconds(10))
            try await listener.subscribe("roomcast/#")
            let inbox = StreamCollector(listener.messages)
            // mosquitto announces the bridge state on $SYS once the bridge is up.
            try await local.subscribe("$SYS/broker/connection/+/state")
            let sys = StreamCollector(local.messages)
            try await sys.waitFor("the bridge to connect") { $0.contains { $0.payloadString == "1" } }
            try local.publish(MQTTMessage(topic: "roomcast/hall/readings", string: "bridged", qos: .atLeastOnce))
            try await inbox.waitFor("the bridged message") { $0.contains { $0.payloadString == "bridged" } }
        } catch {
            await listener.shutdown(); await local.shutdown()
            await edge.cleanup(); await upstream.cleanup()
            throw WithBrokerLog(underlying: error, log: edge.logTail())
        }
        await listener.shutdown(); await local.shutdown()
        await edge.cleanup(); await upstream.cleanup()
    }
}
