import Foundation
@testable import RoomcastMQTT
import Testing
import TestSupport

/// An MQTT 5 broker says why it closes a connection (DISCONNECT with a reason code). The client
/// reported every such close as "the broker closed the connection": two programs sharing a
/// client id (a copied config) displaced each other with nothing in the log to say why.
/// The broker serves one connection it closes with a reason, then the client's next.
@Suite(.serialized) struct BrokerDisconnectTests {
    @Test(arguments: [(UInt8(0x8E), "session taken over"), (0x98, "administrative action")])
    func aDisconnectIsReportedWithItsReason(_ code: UInt8, _ words: String) async throws {
        let broker = try ScriptedMQTTBroker()
        defer { broker.close() }
        let serving = Thread { broker.serveThenDisconnect(reason: code) }
        serving.start()
        let client = try MQTTClient(configuration: MQTTClientConfiguration(
            host: "127.0.0.1", port: broker.port, clientID: "disconnected", protocolVersion: .v5,
            reconnectBackoff: MQTTBackoff(initial: 0.2, maximum: 0.2)), logger: .silent)
        let events = StreamCollector(client.connectionEvents)
        client.start()
        try await events.waitFor("the client's disconnect") { seen in
            seen.contains { if case .disconnected = $0 { true } else { false } }
        }
        let reason = events.elements.compactMap { event -> MQTTError? in
            if case .disconnected(let reason) = event { reason } else { nil }
        }.first
        #expect("\(reason.map { "\($0)" } ?? "none")".contains(words), "\(String(describing: reason))")
        // A reason is no verdict on the client: it connects again, as after any lost connection.
        try await events.waitFor("the client to connect again") { seen in
            seen.filter { if case .connected = $0 { true } else { false } }.count == 2
        }
        await client.shutdown()
    }
}
