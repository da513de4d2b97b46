import Foundation
import RoomcastLogging
import RoomcastMQTT
import Testing
import TestSupport

@Suite(.requiresMosquitto, .timeLimit(.minutes(1)))
struct AuthTests {
    static let users = ["agent": "right-password"]

    @Test(arguments: MQTTClientConfiguration.ProtocolVersion.allCases)
    func correctPasswordConnects(version: MQTTClientConfiguration.ProtocolVersion) async throws {
        try await withRig(.init(users: Self.users)) { rig in
            _ = try await rig.connectedClient("ok", version: version) { c in
                c.username = "agent"
                c.password = "right-password"
            }
        }
    }

    @Test(arguments: MQTTClientConfiguration.ProtocolVersion.allCases)
    func wrongPasswordIsReportedClearlyAndBacksOff(version: MQTTClientConfiguration.ProtocolVersion) async throws {
        try await withRig(.init(users: Self.users)) { rig in
            var cfg = rig.configuration("intruder", version: version)
            cfg.username = "agent"
            cfg.password = "wrong"
            cfg.reconnectBackoff = MQTTBackoff(initial: 0.1, maximum: 0.4, multiplier: 2, jitter: 0)
            let c = try rig.client(cfg)
            let events = StreamCollector(c.connectionEvents)
            // mosquitto 2.0 answers a wrong password with "not authorised" (CONNACK 5 / reason 0x87), not 4 / 0x86.
            let expected = MQTTError.notAuthorized(endpoint: "127.0.0.1:\(rig.broker.port)", username: "agent")
            await #expect(throws: expected) { try await c.waitUntilConnected(timeout: .seconds(10)) }
            #expect(expected.isAuthenticationFailure)
            #expect(expected.description.contains("check the password for user \"agent\""))

            // Retries keep going, each after a longer (capped) delay: the broker is not hammered.
            let got = try await events.waitFor("four refused attempts") { $0.count >= 4 }
            #expect(got.prefix(4).map(\.failure) == Array(repeating: expected, count: 4))
            #expect(got.prefix(4).map(\.retryIn) == [0.1, 0.2, 0.4, 0.4])
            #expect(!c.isConnected)
        }
    }

    @Test func anonymousClientIsNotAuthorised() async throws {
        try await withRig(.init(users: Self.users)) { rig in
            let c = try rig.client(rig.configuration("anonymous"))
            await #expect(throws: MQTTError.notAuthorized(endpoint: "127.0.0.1:\(rig.broker.port)", username: nil)) {
                try await c.waitUntilConnected(timeout: .seconds(10))
            }
        }
    }

    @Test func aclFileLimitsWhatAUserReceives() async throws {
        // mosquitto 2.0 accepts every SUBSCRIBE and applies the ACL when delivering.
        let acl = """
        user agent
        topic read roomcast/#
        topic write #
        """
        try await withRig(.init(users: Self.users, aclRules: acl)) { rig in
            let c = try await rig.connectedClient("acl") { c in
                c.username = "agent"
                c.password = "right-password"
            }
            try await c.subscribe("#")
            let inbox = StreamCollector(c.messages)
            try c.publish(MQTTMessage(topic: "secret/x", string: "hidden", qos: .atLeastOnce))
            try c.publish(MQTTMessage(topic: "roomcast/done", string: "visible", qos: .atLeastOnce))
            let got = try await inbox.waitFor("the allowed message") { !$0.isEmpty }
            #expect(got.map(\.topic) == ["roomcast/done"])
        }
    }

    /// A broker that refuses subscriptions (mosquitto's dynamic security, EMQX, HiveMQ): one made
    /// before connecting, sent again at each connect, is an error in the log naming the filter,
    /// the user and the ACL; one made while connected throws.
    @Test func aRefusedSubscriptionIsAnErrorNamingTheFilterAndTheACL() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("roomcast-dynsec-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try await withRig(.init(extraConfig: try MosquittoBroker.denyingEverySubscription(in: dir))) { rig in
            let c = try MQTTClient(configuration: rig.configuration("refused"),
                                   logger: Logger(label: "refused", level: .debug, handler: rig.logs))
            try await c.subscribe("roomcast/nodes/#")
            c.start()
            try await c.waitUntilConnected(timeout: .seconds(10))
            let line = rig.logs.records.first { $0.message == "mqtt broker rejected a subscription" }
            #expect(line?.level == .error && line?.metadata["mqtt.topic"] == "roomcast/nodes/#", "\(rig.logs.records.map(\.message))")
            #expect(line?.metadata["hint"]?.contains("ACL") == true)
            await #expect(throws: MQTTError.subscriptionRejected(filter: "roomcast/presence/+")) {
                try await c.subscribe("roomcast/presence/+")
            }
            await c.shutdown(timeout: .seconds(2))
        }
    }
}
