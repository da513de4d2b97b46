import Foundation
import RoomcastMQTT
import Shared
import Testing
import TestSupport

/// The compatibility outputs through the shipped ACL, published by the real edge agent with a
/// node's own account: allowed where the ACL says so, and a refusal is counted, logged and
/// reported in telemetry where it does not.
extension LockedDownBrokerTests {
    @Test func compatibilityOutputsPassTheShippedACLAndARefusalIsCountedAndLogged() async throws {
        let bin = try FaultRig.productsDirectory()
        let broker = try await LockedDownBroker.start()
        let dir = broker.directory
        try await ChildProcess.run("\(bin)/roomcast-sim", ["generate", "--layout", "house", "--seed", "4", "--duration", "120",
                                                           "--out", "\(dir)/home", "--phones", "0"], in: dir)
        let tracking = try String(contentsOfFile: "\(dir)/home/agent.yaml", encoding: .utf8)
        func agentYAML(_ user: String, room: String?) -> String {
            tracking + """

                mqtt:
                  broker: mqtts://\(user)@127.0.0.1:\(broker.port)
                  tls:
                    ca_file: \(broker.tls.caCertificate)
                outputs:
                  mqtt_room: true
                  espresense: true
                publish:
                  telemetry_interval_s: 1

                """ + (room.map { "room: \($0)\n" } ?? "")
        }
        // kitchen-pi has no `room:`: its room is its name, which the shipped patterns allow. hall-pi
        // stands in the "hall", which the shipped ACL does not give its account.
        try agentYAML("kitchen-pi", room: nil).write(toFile: "\(dir)/kitchen.yaml", atomically: true, encoding: .utf8)
        try agentYAML("hall-pi", room: "hall").write(toFile: "\(dir)/hall.yaml", atomically: true, encoding: .utf8)

        // Home Assistant reads mqtt_room; ESPresense readers (the aggregator's inputs.espresense) read espresense/.
        let ha = try broker.client("homeassistant")
        let seenByHA = StreamCollector(ha.messages)
        ha.start()
        try await ha.subscribe("room_presence/#")
        try await ha.waitUntilConnected(timeout: .seconds(10))
        let reader = try broker.client("aggregator")
        let seenByReader = StreamCollector(reader.messages)
        reader.start()
        try await reader.subscribe("espresense/devices/#")
        try await reader.subscribe("roomcast/nodes/+/telemetry")
        try await reader.waitUntilConnected(timeout: .seconds(10))

        func agent(_ node: String, _ config: String) throws -> ChildProcess {
            try ChildProcess("/usr/bin/env", [
                "ROOMCAST_MQTT_PASSWORD=\(LockedDownBroker.users[node]!)", "\(bin)/edge-agent", "run", "-c", "\(dir)/\(config)",
                "--node", node, "--source", "btsnoop:\(dir)/home/nodes/\(node).btsnoop",
            ], stdoutPath: "\(dir)/\(node).log", stderrPath: "\(dir)/\(node).log")
        }
        let kitchen = try agent("kitchen-pi", "kitchen.yaml")
        let hall = try agent("hall-pi", "hall.yaml")
        let logs = { "kitchen-pi:\n\(kitchen.stdout.suffix(1500))\nhall-pi:\n\(hall.stdout.suffix(1500))\nbroker:\n\(broker.log.suffix(1500))" }

        let mqttRoom = try await seenByHA.waitFor("kitchen-pi's mqtt_room reports", timeout: .seconds(30)) { all in
            all.contains { $0.topic == "room_presence/kitchen-pi" }
        }
        let report = try #require(mqttRoom.first { $0.topic == "room_presence/kitchen-pi" })
        #expect(report.payloadString?.contains("\"distance\"") == true, "\(report.payloadString ?? "")")
        _ = try await seenByReader.waitFor("kitchen-pi's ESPresense readings", timeout: .seconds(30)) { all in
            all.contains { $0.topic.hasPrefix("espresense/devices/") && $0.topic.hasSuffix("/kitchen-pi") }
        }

        // hall-pi's outputs are refused; its telemetry says how many, per topic family.
        let refusedTelemetry = try await seenByReader.waitFor("hall-pi's telemetry counting refusals", timeout: .seconds(30)) { all in
            all.contains { m in
                m.topic == "roomcast/nodes/hall-pi/telemetry"
                    && ((try? WireFormat.decode(NodeTelemetry.self, from: m.payload))?.refusedTopics?.count ?? 0) >= 2
            }
        }
        let telemetry = try #require(refusedTelemetry.compactMap { m -> NodeTelemetry? in
            guard m.topic == "roomcast/nodes/hall-pi/telemetry" else { return nil }
            return try? WireFormat.decode(NodeTelemetry.self, from: m.payload)
        }.last { ($0.refusedTopics?.count ?? 0) >= 2 })
        #expect(Set(telemetry.refusedTopics?.keys.map { $0 } ?? []) == ["room_presence/hall", "espresense/devices/+/hall"],
                "\(String(describing: telemetry.refusedTopics))")
        #expect(telemetry.publishesRefused == telemetry.refusedTopics?.values.reduce(0, +))
        // The log says so, with the count and where to fix it.
        try await eventually("hall-pi to log the refusal", timeout: .seconds(10), detail: logs) {
            hall.stdout.contains("mqtt broker refused publishes")
        }
        let line = try #require(hall.stdout.split(separator: "\n").first { $0.contains("mqtt broker refused publishes") })
        #expect(line.hasPrefix("warning"), "\(line)")
        #expect(line.contains("mqtt.refused=") && line.contains("room_presence/hall") && line.contains("roomcast.acl")
                && line.contains("0x87"), "\(line)")
        // Its own topics pass, and nothing of the hall reached Home Assistant.
        #expect(refusedTelemetry.contains { $0.topic == "roomcast/nodes/hall-pi/telemetry" })
        #expect(!seenByHA.elements.contains { $0.topic == "room_presence/hall" })
        #expect(broker.log.contains("Denied PUBLISH from hall-pi"), "the broker denied nothing of hall-pi's")
        // kitchen-pi, whose every publish the ACL allows, counted no refusal.
        let kitchenTelemetry = seenByReader.elements.filter { $0.topic == "roomcast/nodes/kitchen-pi/telemetry" }
            .compactMap { try? WireFormat.decode(NodeTelemetry.self, from: $0.payload) }
        #expect(!kitchenTelemetry.isEmpty && kitchenTelemetry.allSatisfy { $0.publishesRefused == 0 && $0.refusedTopics == nil })
        #expect(!kitchen.stdout.contains("refused publishes"), "\(logs())")

        for c in [ha, reader] { await c.shutdown() }
        for a in [kitchen, hall] { a.send(SIGTERM) }
        for a in [kitchen, hall] { await a.waitForExit() }
        await broker.stop()
    }
}
