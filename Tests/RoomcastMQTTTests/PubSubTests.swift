import Foundation
import RoomcastMQTT
import Testing
import TestSupport

@Suite(.requiresMosquitto, .timeLimit(.minutes(1)))
struct PubSubTests {
    @Test(arguments: MQTTClientConfiguration.ProtocolVersion.allCases, MQTTQoS.allCases)
    func wildcardsDeliverMatchingTopicsOnly(version: MQTTClientConfiguration.ProtocolVersion, qos: MQTTQoS) async throws {
        try await withRig { rig in
            let sub = try await rig.connectedClient("sub", version: version)
            try await sub.subscribe("roomcast/+/readings", qos: qos)
            try await sub.subscribe("status/#", qos: qos)
            let inbox = StreamCollector(sub.messages)
            let pub = try await rig.connectedClient("pub", version: version)

            let topics = [
                "roomcast/kitchen/readings",        // + matches one level
                "roomcast/kitchen/extra/readings",  // + does not match two
                "roomcast/readings",                // + needs a level
                "status",                           // # also matches the parent
                "status/node/a/b",                  // # matches any depth
                "other/status",
                "status/done",                      // sentinel: same publisher, so it arrives last
            ]
            let binary: [UInt8] = [0x00, 0xFF, 0x10, 0x80]
            for t in topics { try pub.publish(MQTTMessage(topic: t, payload: binary + Array(t.utf8), qos: qos)) }

            let got = try await inbox.waitFor("the sentinel") { $0.contains { $0.topic == "status/done" } }
            #expect(got.map(\.topic) == ["roomcast/kitchen/readings", "status", "status/node/a/b", "status/done"])
            for m in got {
                #expect(m.payload == binary + Array(m.topic.utf8))
                #expect(m.qos == qos)
                #expect(!m.retain)
            }
            #expect(pub.publishFailures == 0)
            #expect(sub.droppedInbound == 0)
        }
    }

    @Test(arguments: MQTTClientConfiguration.ProtocolVersion.allCases)
    func retainedMessageReachesLateSubscriber(version: MQTTClientConfiguration.ProtocolVersion) async throws {
        try await withRig { rig in
            let pub = try await rig.connectedClient("pub", version: version)
            try pub.publish(MQTTMessage(topic: "roomcast/room/kitchen/state", string: "occupied",
                                        qos: .atLeastOnce, retain: true))
            // QoS 1 acknowledged: the broker holds the retained message before anyone subscribes.
            #expect(await pub.flush(timeout: .seconds(5)))

            let late = try await rig.connectedClient("late", version: version)
            let inbox = StreamCollector(late.messages)
            try await late.subscribe("roomcast/room/+/state")
            let got = try await inbox.waitFor("the retained state") { !$0.isEmpty }
            #expect(got.first?.topic == "roomcast/room/kitchen/state")
            #expect(got.first?.payloadString == "occupied")
            #expect(got.first?.retain == true)
        }
    }

    @Test func publishWhileNotConnectedThrowsAndIsCounted() throws {
        let port = try freePort()
        let client = try MQTTClient(configuration: .testing(port: port, id: "idle"), logger: .silent)
        #expect(throws: MQTTError.notConnected) {
            try client.publish(MQTTMessage(topic: "a", string: "x"))
        }
        #expect(client.publishFailures == 1)
    }

    @Test func invalidTopicsAreRefusedClearly() async throws {
        try await withRig { rig in
            let c = try await rig.connectedClient("c")
            #expect(throws: MQTTError.invalidTopic("a/+/b")) {
                try c.publish(MQTTMessage(topic: "a/+/b", string: "x"))
            }
            await #expect(throws: MQTTError.invalidTopic("a/#/b")) {
                try await c.subscribe("a/#/b")
            }
            #expect(c.publishFailures == 1)
        }
    }
}
