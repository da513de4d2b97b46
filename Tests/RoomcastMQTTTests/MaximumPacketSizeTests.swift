import Foundation
@testable import RoomcastMQTT
import Testing
import TestSupport

/// MQTT 5 Maximum Packet Size: the broker drops messages bigger than the client's limit for that
/// client, on its first connection and after every reconnect (libmosquitto re-sends the stored
/// CONNECT properties), while smaller ones still flow.
@Suite(.serialized) struct MaximumPacketSizeTests {
    @Test(.requiresMosquitto) func aBrokerWithoutALimitNeverSendsABiggerPacketBeforeOrAfterAReconnect() async throws {
        let broker = try await MosquittoBroker.start()
        let id = "limited-\(UUID().uuidString.prefix(6))"
        let client = try MQTTClient(configuration: MQTTClientConfiguration(
            host: "127.0.0.1", port: broker.port, clientID: id, protocolVersion: .v5,
            reconnectBackoff: MQTTBackoff(initial: 0.1, maximum: 0.5), maximumPacketSize: 64 * 1024), logger: .silent)
        let seen = StreamCollector(client.messages)
        client.start()
        try await client.subscribe("big/#", qos: .atLeastOnce)
        try await client.waitUntilConnected(timeout: .seconds(10))
        let file = NSTemporaryDirectory() + "roomcast-big-\(UUID().uuidString.prefix(6))"
        try Data(repeating: 0x41, count: 1024 * 1024).write(to: URL(fileURLWithPath: file))
        defer { try? FileManager.default.removeItem(atPath: file) }
        func drops() -> Int { broker.log.components(separatedBy: "Dropping too large outgoing PUBLISH for \(id)").count - 1 }

        for round in 1...2 {
            let before = drops()
            _ = try await ChildProcess.run("/usr/bin/mosquitto_pub", ["-h", "127.0.0.1", "-p", "\(broker.port)", "-q", "1",
                                                                      "-t", "big/\(round)", "-f", file], in: NSTemporaryDirectory())
            try await eventually("the broker to drop the 1 MB message for the client (round \(round))", detail: { broker.logTail(10) }) {
                drops() > before
            }
            // A message under the limit still arrives, after the big one.
            _ = try await ChildProcess.run("/usr/bin/mosquitto_pub", ["-h", "127.0.0.1", "-p", "\(broker.port)", "-q", "1",
                                                                      "-t", "big/small\(round)", "-m", "ok"], in: NSTemporaryDirectory())
            try await seen.waitFor("the small message of round \(round)") { $0.contains { $0.topic == "big/small\(round)" } }
            #expect(!seen.elements.contains { $0.payload.count > 64 * 1024 }, "a packet over the limit was delivered")
            if round == 1 {
                let reconnects = client.reconnects
                client.abortConnectionForTesting()
                try await eventually("the client to reconnect", timeout: .seconds(10)) { client.reconnects > reconnects && client.isConnected }
            }
        }
        await client.shutdown()
        await broker.cleanup()
    }

    @Test func theLimitNeedsMQTT5() {
        let c = MQTTClientConfiguration(host: "h", protocolVersion: .v311, maximumPacketSize: 1000)
        #expect(c.validate().contains { $0.contains("maximumPacketSize needs protocolVersion v5") })
        #expect(MQTTClientConfiguration(host: "h", protocolVersion: .v5, maximumPacketSize: 0).validate()
            .contains { $0.contains("maximumPacketSize must be within") })
        #expect(MQTTClientConfiguration(host: "h", protocolVersion: .v5, maximumPacketSize: 1000).validate().isEmpty)
    }
}
