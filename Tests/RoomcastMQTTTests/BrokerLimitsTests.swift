@testable import RoomcastMQTT
import Testing
import TestSupport

/// What a broker's own limits look like to a user under MQTT 3.1.1, which has no reason codes:
/// mosquitto answers them with a code or a close that meant something else, and the error says
/// what else it can mean.
@Suite(.requiresMosquitto, .timeLimit(.minutes(1)))
struct BrokerLimitsTests {
    /// A keep-alive above `max_keepalive` gets "identifier rejected" (code 2) from mosquitto
    /// 2.0.12 on (the 2.0.11 these tests run takes it), so the error names both causes. MQTT 5's
    /// 0x85 is the identifier only: there the broker gives its own keep-alive instead.
    @Test func code2NamesTheKeepAliveToo() {
        let v311 = Mosquitto.connackError(2, endpoint: "broker:1883", username: nil)
        #expect(v311.description.contains("clientID") && v311.description.contains("max_keepalive") && v311.isPermanent)
        #expect(!Mosquitto.connackError(0x85, endpoint: "broker:1883", username: nil).description.contains("keepalive"))
    }

    /// A broker that refuses retained messages closes a connection whose Last Will is retained
    /// (every Roomcast program's) before any CONNACK.
    @Test func aBrokerWithoutRetainedMessagesIsNamed() async throws {
        try await withRig(.init(extraConfig: ["retain_available false"])) { rig in
            var cfg = rig.configuration("retained-will", version: .v311)
            cfg.lastWill = MQTTMessage(topic: "roomcast/nodes/kitchen-pi/status", string: "offline", qos: .atLeastOnce, retain: true)
            let c = try rig.client(cfg)
            let error = await #expect(throws: MQTTError.self) { try await c.waitUntilConnected(timeout: .seconds(3)) }
            #expect(error?.description.contains("retain_available false") == true, "\(String(describing: error))")
        }
    }

    /// A message over mosquitto's `message_size_limit` is refused with 0x95 under MQTT 5; the
    /// log names it and the setting, not "the broker refused these messages".
    @Test func aMessageOverTheBrokersSizeLimitIsNamed() async throws {
        try await withRig(.init(extraConfig: ["message_size_limit 1000"])) { rig in
            let c = try await rig.connectedClient("big")
            try c.publish(MQTTMessage(topic: "roomcast/rooms/hall", payload: Array(repeating: 0x61, count: 2000), qos: .atLeastOnce))
            try await eventually("the refusal logged", timeout: .seconds(10)) {
                rig.logs.records.contains { $0.message == "mqtt broker refused publishes" }
            }
            let line = rig.logs.records.first { $0.message == "mqtt broker refused publishes" }
            #expect(line?.metadata["mqtt.reason"] == "0x95 packet too large")
            #expect(line?.metadata["mqtt.hint"]?.contains("message_size_limit") == true, "\(String(describing: line?.metadata))")
        }
    }
}
