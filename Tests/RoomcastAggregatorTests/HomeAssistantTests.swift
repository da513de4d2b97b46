import Foundation
import RoomcastMQTT
import Shared
import Testing
import TestSupport

/// The aggregator's Home Assistant discovery checked against a real Home Assistant
/// (scripts/setup-home-assistant.sh): the entities it creates, their states and attributes
/// as HA's REST API reports them, availability, removal, the mqtt_room output read by HA's
/// own mqtt_room sensor, and no warning or error in HA's log about our payloads.
@Suite(.serialized, .requiresMosquitto, .enabled(if: HomeAssistantInstance.shouldRun, HomeAssistantInstance.skipReason))
struct HomeAssistantTests {
    static let catTracker = "device_tracker.roomcast_ibeacon_e06f95e4_fcfc_42c6_b4f8_f6bae87ea1a0_1_1"
    static let catRoom = "sensor.roomcast_ibeacon_e06f95e4_fcfc_42c6_b4f8_f6bae87ea1a0_1_1_room"
    static let dogTracker = "device_tracker.roomcast_ibeacon_e06f95e4_fcfc_42c6_b4f8_f6bae87ea1a0_1_2"
    static let dogRoom = "sensor.roomcast_ibeacon_e06f95e4_fcfc_42c6_b4f8_f6bae87ea1a0_1_2_room"
    static func occupancy(_ room: String) -> String { "binary_sensor.roomcast_room_\(room)_occupancy" }
    static func count(_ room: String) -> String { "sensor.roomcast_room_\(room)_count" }
    static func connectivity(_ node: String) -> String { "binary_sensor.roomcast_node_\(node)_connectivity" }
    static let aggregatorConnectivity = "binary_sensor.roomcast_aggregator_connectivity"
    /// HA's own mqtt_room sensor for the cat, fed by the aggregator's `output.mqtt_room`.
    static let catMQTTRoom = "sensor.cat_mqtt_room"

    /// The aggregator config: the two-room home, a short away timeout so "away" is quick to see.
    static func config(port: Int, beacons: [LiveRig.Beacon]) throws -> String {
        let root: [String: Any] = [
            "mqtt": ["broker": "mqtt://127.0.0.1:\(port)"],
            "rooms": Home.rooms.map { ["name": $0.name, "floor": $0.floor] as [String: Any] },
            "nodes": Home.nodes.map { ["name": $0.name, "room": $0.room] },
            "beacons": beacons.map { ["id": $0.id.rawValue, "name": $0.name] },
            "fusion": ["away_timeout_s": 4],
            "output": ["mqtt_room": true, "refresh_interval_s": 60],
            "log": ["level": "debug"],
        ]
        return String(decoding: try JSONSerialization.data(withJSONObject: root, options: [.sortedKeys]), as: UTF8.self)
    }

    @Test func discoveredEntitiesFollowTheAggregatorInARealHomeAssistant() async throws {
        let broker = try await MosquittoBroker.start()
        let dir = try LiveRig.workDirectory()
        let configPath = "\(dir)/site.json"
        try Self.config(port: broker.port, beacons: Home.beacons).write(toFile: configPath, atomically: true, encoding: .utf8)
        let feeder = try await ReadingFeeder(port: broker.port)
        for n in ["office-pi", "kitchen-pi"] {
            try feeder.publish(MQTTMessage(topic: "roomcast/nodes/\(n)/status", string: "online", qos: .atLeastOnce, retain: true))
        }
        feeder.set(Home.cat, node: "office-pi", rssi: -55)
        feeder.set(Home.cat, node: "kitchen-pi", rssi: -80)
        feeder.set(Home.dog, node: "kitchen-pi", rssi: -58)
        feeder.set(Home.dog, node: "office-pi", rssi: -82)
        // The aggregator and Home Assistant start together: whichever is first, HA ends up with
        // every config and state, since both are retained.
        var aggregator = try LiveRig.startAggregator(configPath: configPath, instance: "a", in: dir)
        defer { aggregator.send(SIGKILL) }
        let ha = try await HomeAssistantInstance.start(brokerPort: broker.port, in: dir, extraConfiguration: """
            sensor:
              - platform: mqtt_room
                device_id: "\(Home.cat.rawValue)"
                name: Cat mqtt_room
                state_topic: room_presence
                away_timeout: 120

            """)
        defer { ha.process.send(SIGKILL) }

        // Every entity appears with the aggregator's state.
        var s = try await ha.waitFor("every Roomcast entity in Home Assistant") { s in
            s[Self.catTracker]?.state == "office" && s[Self.dogTracker]?.state == "kitchen"
                && s[Self.catRoom]?.state == "office" && s[Self.dogRoom]?.state == "kitchen"
                && s[Self.occupancy("office")]?.state == "on" && s[Self.occupancy("kitchen")]?.state == "on"
                && s[Self.count("office")]?.state == "1" && s[Self.count("kitchen")]?.state == "1"
                && s[Self.connectivity("office_pi")]?.state == "on" && s[Self.connectivity("kitchen_pi")]?.state == "on"
                && s[Self.aggregatorConnectivity]?.state == "on"
        }
        let tracker = try #require(s[Self.catTracker])
        #expect(tracker.attributes["source_type"] == .string("bluetooth_le"))
        #expect(tracker.attributes["room"] == .string("office"))
        #expect(tracker.attributes["floor"] == .number(1))
        #expect(tracker.attributes["node"] == .string("office-pi"))
        #expect(tracker.attributes["friendly_name"] == .string("Cat"))
        let distance = try #require(tracker.attributes["distance"]?.number)
        #expect(distance > 0 && distance < 3, "distance \(distance) m for -55 dBm at -59 dBm/1 m")
        let confidence = try #require(tracker.attributes["confidence"]?.number)
        #expect(confidence > 0 && confidence <= 1)
        let lastSeen = try #require(tracker.attributes["last_seen"]?.number)
        #expect(abs(lastSeen - Date().timeIntervalSince1970) < 30)
        // Grouped under devices: the beacon's two entities on one device, reached via the aggregator's;
        // a room's entities in the Home Assistant area of that name (suggested_area).
        #expect(try await ha.render("{{ device_entities(device_id('\(Self.catTracker)')) | sort | join(',') }}")
                == [Self.catTracker, Self.catRoom].sorted().joined(separator: ","))
        #expect(try await ha.render("{{ device_attr(device_id('\(Self.catTracker)'), 'via_device_id') == device_id('\(Self.aggregatorConnectivity)') }}") == "True")
        #expect(try await ha.render("{{ device_attr(device_id('\(Self.catTracker)'), 'name') }}") == "Cat")
        // (Onboarding made areas Living Room, Kitchen, Bedroom: suggested_area "kitchen" joins Kitchen.)
        let areas = try await ha.render("{{ area_id('\(Self.occupancy("office"))') }}|{{ area_id('\(Self.count("kitchen"))') }}")
        #expect(areas == "office|kitchen")
        #expect(s[Self.occupancy("office")]?.attributes["device_class"] == .string("occupancy"))
        #expect(s[Self.connectivity("office_pi")]?.attributes["device_class"] == .string("connectivity"))

        // The cat moves to the kitchen: tracker, room sensor, both rooms and HA's mqtt_room follow.
        // (mqtt_room reports are not retained: the sensor hears of the cat with this move.)
        feeder.set(Home.cat, node: "office-pi", rssi: -80)
        feeder.set(Home.cat, node: "kitchen-pi", rssi: -55)
        try await ha.waitFor("the cat in the kitchen") { s in
            s[Self.catTracker]?.state == "kitchen" && s[Self.catRoom]?.state == "kitchen"
                && s[Self.catTracker]?.attributes["floor"] == .number(0)
                && s[Self.occupancy("office")]?.state == "off" && s[Self.count("office")]?.state == "0"
                && s[Self.count("kitchen")]?.state == "2" && s[Self.catMQTTRoom]?.state == "kitchen"
        }

        // And straight back, at the same distance: mqtt_room would keep a beacon in its room for
        // `timeout` (5 s) against a report that is not closer; the aggregator's decision must win.
        feeder.set(Home.cat, node: "office-pi", rssi: -55)
        feeder.set(Home.cat, node: "kitchen-pi", rssi: -80)
        try await ha.waitFor("the cat back in the office, also for mqtt_room") { s in
            s[Self.catTracker]?.state == "office" && s[Self.catMQTTRoom]?.state == "office"
                && s[Self.count("office")]?.state == "1" && s[Self.count("kitchen")]?.state == "1"
        }

        // The dog is heard no more: after the away timeout its tracker is not_home.
        feeder.set(Home.dog, node: "kitchen-pi", rssi: nil)
        feeder.set(Home.dog, node: "office-pi", rssi: nil)
        try await ha.waitFor("the dog away") { s in
            s[Self.dogTracker]?.state == "not_home" && s[Self.dogRoom]?.state == "away" && s[Self.count("kitchen")]?.state == "0"
                && s[Self.occupancy("kitchen")]?.state == "off"
        }

        // A node goes offline: its connectivity sensor turns off.
        try feeder.publish(MQTTMessage(topic: "roomcast/nodes/office-pi/status", string: "offline", qos: .atLeastOnce, retain: true))
        try await ha.waitFor("office-pi disconnected") { $0[Self.connectivity("office_pi")]?.state == "off" }

        // A graceful stop publishes `offline` on the availability topic: every entity is unavailable.
        aggregator.send(SIGTERM)
        let stopping = aggregator
        #expect(try await withTimeout(.seconds(10), "aggregator to exit") { await stopping.waitForExit() } == 0)
        s = try await ha.waitFor("Roomcast entities unavailable") { s in
            [Self.catTracker, Self.catRoom, Self.dogTracker, Self.occupancy("kitchen"), Self.count("office"),
             Self.connectivity("kitchen_pi")].allSatisfy { s[$0]?.state == "unavailable" }
                && s[Self.aggregatorConnectivity]?.state == "off"
        }

        // The dog leaves the config: after a restart its entities are gone from HA, the cat's are back.
        try Self.config(port: broker.port, beacons: [Home.beacons[0]]).write(toFile: configPath, atomically: true, encoding: .utf8)
        aggregator = try LiveRig.startAggregator(configPath: configPath, instance: "a", in: dir)
        // (office-pi is still offline: only the kitchen hears the cat now.)
        s = try await ha.waitFor("the dog's entities removed, the cat's available", timeout: .seconds(30)) { s in
            s[Self.dogTracker] == nil && s[Self.dogRoom] == nil
                && s[Self.catTracker]?.state == "kitchen" && s[Self.aggregatorConnectivity]?.state == "on"
        }

        let problems = ha.problems()
        #expect(problems.isEmpty, "Home Assistant logged problems:\n\(problems.joined(separator: "\n"))")
        aggregator.send(SIGTERM)
        await ha.stop()
        await feeder.stop()
        await broker.cleanup()
        try? FileManager.default.removeItem(atPath: dir)
    }
}
