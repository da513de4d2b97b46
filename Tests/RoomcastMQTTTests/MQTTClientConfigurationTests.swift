import RoomcastMQTT
import Shared
import Testing

@Suite struct MQTTClientConfigurationTests {
    @Test func defaultsAreValid() {
        #expect(MQTTClientConfiguration(host: "broker.local").validate().isEmpty)
    }

    @Test func reportsEveryProblemWithItsPath() {
        var c = MQTTClientConfiguration(host: "", port: 0)
        c.cleanSession = false
        c.password = "secret"
        c.keepAlive = 1
        c.tls = .init(caFile: "/ca.pem", certificateFile: "/client.pem")
        c.lastWill = MQTTMessage(topic: "a/#", string: "x")
        c.connectTimeout = 0
        c.inboundBufferSize = 0
        c.reconnectBackoff = MQTTBackoff(initial: 0)
        let problems = c.validate()
        for field in ["mqtt.host", "mqtt.port", "mqtt.clientID", "mqtt.password", "mqtt.keepAlive",
                      "mqtt.tls.certificateFile", "mqtt.lastWill.topic", "mqtt.connectTimeout",
                      "mqtt.inboundBufferSize", "mqtt.reconnectBackoff.initial"] {
            #expect(problems.contains { $0.hasPrefix(field) }, "no problem reported for \(field): \(problems)")
        }
    }

    @Test func clientRefusesInvalidConfiguration() {
        #expect(throws: MQTTError.invalidConfiguration(["mqtt.port must be within 1...65535 (got 70000)"])) {
            _ = try MQTTClient(configuration: MQTTClientConfiguration(host: "h", port: 70000), logger: .silent)
        }
    }

    @Test func clientRefusesUnreadableCAFile() {
        let cfg = MQTTClientConfiguration(host: "h", tls: .init(caFile: "/nonexistent/ca.pem"))
        #expect(throws: MQTTError.invalidConfiguration(["mqtt.tls.caFile \"/nonexistent/ca.pem\" cannot be read"])) {
            _ = try MQTTClient(configuration: cfg, logger: .silent)
        }
    }

    @Test func endpointBracketsIPv6() {
        #expect(MQTTClientConfiguration(host: "::1", port: 8883).endpoint == "[::1]:8883")
        #expect(MQTTClientConfiguration(host: "10.0.0.2").endpoint == "10.0.0.2:1883")
    }
}
