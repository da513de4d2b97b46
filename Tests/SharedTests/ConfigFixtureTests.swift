import Foundation
import Testing
@testable import Shared
@testable import RoomcastAdvertising
@testable import RoomcastAgent
@testable import RoomcastAggregator
@testable import RoomcastConfig
@testable import RoomcastFusion
@testable import RoomcastMQTT
@testable import RoomcastYAML

func fixturePath(_ name: String) throws -> String {
    let url = try #require(Bundle.module.url(forResource: "Fixtures/" + name, withExtension: nil))
    return url.path
}

/// Loads a fixture expecting failure; returns the error.
func loadError<T: Decodable>(_ type: T.Type, _ name: String) throws -> ConfigError {
    let path = try fixturePath(name)
    do {
        _ = try ConfigLoader.load(T.self, from: path)
    } catch {
        return error
    }
    Issue.record("\(name) loaded without problems")
    return ConfigError(problems: [])
}

@Suite struct ConfigFixtureTests {
    @Test func fullAgentConfigLoads() throws {
        let c = try ConfigLoader.load(AgentConfig.self, from: try fixturePath("agent-full.yaml"))
        #expect(c.node == "kitchen-pi")
        #expect(c.room == "kitchen")
        #expect(c.mqtt.broker == BrokerURL(isTLS: true, host: "broker.example.net", port: 8883, username: "roomcast"))
        #expect(c.mqtt.passwordEnv == "ROOMCAST_TEST_PASSWORD")
        #expect(c.mqtt.clientID == "agent-kitchen")
        #expect(c.mqtt.keepalive == 20)
        #expect(c.mqtt.topics.prefix == "home/roomcast")
        #expect(c.mqtt.tls == MQTTConfig.TLSConfig(caFile: "/etc/roomcast/ca.pem", certFile: "/etc/roomcast/kitchen.pem",
                                                    keyFile: "/etc/roomcast/kitchen.key", insecure: false))
        #expect(c.source.radio == .hci(device: "hci1"))
        #expect(c.scan == AgentConfig.Scan(active: true, intervalMs: 160, windowMs: 80, restartAfterS: 120))
        #expect(c.ranging.filter == AgentConfig.Filter(kind: .medianKalman, window: 7, processNoise: 0.02,
                                                        measurementNoise: 3.5, outlierDb: 12))
        #expect(c.ranging.pathLossExponent == 2.8)
        #expect(c.ranging.rxAdjustDb == -3)
        #expect(c.ranging.defaultPower == -61)
        #expect(c.ranging.immediateM == 0.4 && c.ranging.nearM == 2.5 && c.ranging.forgetAfterS == 45)
        #expect(c.publish == AgentConfig.Publish(reportIntervalS: 2, significantChangeDb: 4, significantChangeM: 0.75, telemetryIntervalS: 30))
        #expect(c.regions.map(\.name) == ["house", "cat-tag", "office-eddystone"])
        #expect(c.regions[1].major == 1233 && c.regions[1].minor == 45)
        #expect(c.regions[1].uuid.flatMap(UUID.init(uuidString:)) == UUID(uuidString: "e06f95e4-fcfc-42c6-b4f8-f6bae87ea1a0"))
        #expect(c.regions[2].namespace == "edd1ebeac04e5defa017" && c.regions[2].instance == "0bdb87539b67")
        #expect(c.beacons == [
            KnownBeaconConfig(id: "ibeacon:e06f95e4-fcfc-42c6-b4f8-f6bae87ea1a0-1233-45", name: "Cat", power: -59),
            KnownBeaconConfig(id: "mac:a4c138aabbcc"),
        ])
        #expect(c.irks == [IRKConfig(name: "alice-phone", key: "0123456789abcdef0123456789ABCDEF")])
        #expect(c.fingerprints.builtins == ["ruuvi"])
        #expect(c.fingerprints.rules.map(\.name) == ["tile", "airtag", "band"])
        #expect(c.fingerprints.rules[1].companyId?.value == 0x004C && c.fingerprints.rules[1].manufacturerPrefix == "1219")
        #expect(c.fingerprints.rules[2].id == "constant" && c.fingerprints.rules[2].value == "band")
        #expect(c.advertising.knownBeacons.count == 2)
        #expect(c.maxTrackedBeacons == 2048)
        #expect(c.advertise == AgentConfig.Advertise(enabled: true, uuid: "e2c56db5-dffb-48d2-b060-d0f5a71096e0",
                                                      major: 100, minor: 7, power: -65, intervalMs: 500))
        #expect(c.outputs == AgentConfig.Outputs(enabled: [.mqttRoom, .espresense]))
        #expect(c.log.level == .debug)
    }

    @Test func minimalAgentConfigGetsEveryDefault() throws {
        let c = try ConfigLoader.parse(AgentConfig.self, yaml: "node: hall-pi\n")
        #expect(c == AgentConfig(node: "hall-pi"))
        #expect(c.mqtt.broker.redacted == "mqtt://localhost:1883")
        #expect(c.mqtt.topicPrefix == "roomcast")
        #expect(c.source == .firstAdapter)
        #expect(c.ranging.defaultPower == -59 && c.ranging.pathLossExponent == 2.5)
        #expect(c.ranging.immediateM == 0.5 && c.ranging.nearM == 3.0)
        #expect(c.publish.reportIntervalS == 1.0)
        #expect(c.ranging.filter.kind == .medianKalman)
        #expect(c.log.level == .info)
        #expect(c.maxTrackedBeacons == 4096)
    }

    /// One list element that is no mapping is that element's problem alone: the rest of the list
    /// stays, so what refers to it is not reported as unknown.
    @Test func aBadListElementIsItsOwnProblemOnly() throws {
        func messages(_ yaml: String) -> [String] {
            do { _ = try ConfigLoader.parse(AggregatorConfig.self, yaml: yaml); return [] } catch { return error.messages }
        }
        #expect(messages("rooms:\n  - name: kitchen\n  - hall\nnodes:\n  - {name: pi, room: kitchen}\n")
                == ["rooms[1]: expected a mapping, found 'hall'"])
        #expect(messages("rooms: [{name: kitchen}]\nnodes:\n  - {name: pi, room: kitchen}\n  - pi-2\n"
                         + "partition: {rooms: [kitchen]}\n")
                == ["nodes[1]: expected a mapping, found 'pi-2'"])
        let beacon = "ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0-1-2"
        #expect(messages("rooms: [{name: kitchen}]\nnodes: [{name: pi, room: kitchen}]\nbeacons:\n  - {id: \(beacon)}\n  - 7\n"
                         + "people:\n  - {name: Alice, beacons: [\(beacon)]}\n  - Bob\n")
                == ["beacons[1]: expected a mapping, found '7'", "people[1]: expected a mapping, found 'Bob'"])
    }

    /// Values the ranges allow but that misbehave without a word: a packet limit under what
    /// Roomcast reads, an empty user name, a scan restarted every second, a refresh every tick.
    @Test func valuesThatWouldMisbehaveAreRefused() throws {
        func aggregator(_ yaml: String) -> [String] {
            do { _ = try ConfigLoader.parse(AggregatorConfig.self, yaml: "rooms: [{name: kitchen}]\n" + yaml); return [] }
            catch { return error.messages }
        }
        func agent(_ yaml: String) -> [String] {
            do { _ = try ConfigLoader.parse(AgentConfig.self, yaml: "node: hall-pi\n" + yaml); return [] } catch { return error.messages }
        }
        #expect(aggregator("mqtt: {max_packet_bytes: 1024}\n").first?.hasPrefix("mqtt.max_packet_bytes: must be 0 (no limit) or at least 69632") == true)
        #expect(aggregator("mqtt: {max_packet_bytes: 0}\n") == [] && aggregator("mqtt: {max_packet_bytes: 69632}\n") == [])
        #expect(aggregator("mqtt: {username: \"\"}\n") == ["mqtt.username: must not be empty (leave it out for none)"])
        #expect(aggregator("output: {refresh_interval_s: 0.01}\n").first?.hasPrefix("output.refresh_interval_s: must be 0 (never) or at least 1 s") == true)
        #expect(aggregator("output: {refresh_interval_s: 0}\n") == [])
        #expect(agent("scan: {restart_after_s: 0.1}\n").first?.hasPrefix("scan.restart_after_s: must be 0 (never) or at least 5 s") == true)
        #expect(agent("scan: {restart_after_s: 0}\n") == [] && agent("scan: {restart_after_s: 5}\n") == [])
        // A beacon forgotten sooner than it could be away: one heard every few seconds was never placed.
        #expect(aggregator("fusion: {forget_after_s: 2}\n") == ["fusion.forget_after_s: must be 0 (never) or at least away_timeout_s (30.0 s), found 2.0 s"])
        #expect(aggregator("fusion: {forget_after_s: 0}\n") == [] && aggregator("fusion: {away_timeout_s: 45, forget_after_s: 45}\n") == [])
        // A polygon whose points lie on one line has no place for a beacon: its room could never be shown.
        let flat = "rooms: [{name: hall, polygon: [[5, 0], [9, 0], [7, 0]]}]\n"
        #expect((try? ConfigLoader.parse(AggregatorConfig.self, yaml: flat)) == nil)
        do { _ = try ConfigLoader.parse(AggregatorConfig.self, yaml: flat) } catch {
            #expect(error.messages == ["rooms[0].polygon: encloses no area: its points lie on one line"])
        }
        #expect((try? ConfigLoader.parse(AggregatorConfig.self, yaml: "rooms: [{name: hall, polygon: [[5, 0], [9, 0], [9, 0.2]]}]\n")) != nil)
    }

    /// A standby's lease outlasts the time an aggregator takes to notice a stalled broker, or a
    /// standby that merely cannot hear would take the lease: the shortest is refused, and says why.
    @Test func aLeaseShorterThanAStallTakesToNoticeIsRefused() throws {
        func messages(_ lease: String) -> [String] {
            let yaml = "rooms: [{name: kitchen}]\nnodes: [{name: kitchen-pi, room: kitchen}]\nstandby: {enabled: true, lease_s: \(lease)}\n"
            do { _ = try ConfigLoader.parse(AggregatorConfig.self, yaml: yaml); return [] } catch { return error.messages }
        }
        #expect(messages("1") == ["standby.lease_s: must be at least 3.0 s, found 1.0: a shorter lease lapses before a stalled "
                                  + "broker link is noticed (2.5 s), so a standby that cannot hear would take over"])
        #expect(messages("2.9").count == 1)
        #expect(messages("3") == [])
        #expect(messages("601") == ["standby.lease_s: must be between 3.0 and 600.0 s, found 601.0"])
    }

    /// The power a node advertises is the level at 1 m receivers range by: the adapter's transmit
    /// power (0 to +20 dBm) in its place is refused, as every receiver takes it as no level.
    @Test func advertisedPowerIsALevelAtOneMetre() throws {
        func messages(_ power: Int) -> [String] {
            let yaml = "node: hall-pi\nadvertise: {enabled: true, uuid: e2c56db5-dffb-48d2-b060-d0f5a71096e0, power: \(power)}\n"
            do { _ = try ConfigLoader.parse(AgentConfig.self, yaml: yaml); return [] } catch { return error.messages }
        }
        #expect(messages(-59) == [])
        #expect(messages(4) == ["advertise.power: must be between -127 and -1 dBm, found 4"])
        #expect(messages(0).count == 1)
    }

    @Test func maxTrackedBeaconsIsValidatedWithItsPath() throws {
        func messages(_ yaml: String) -> [String] {
            do { _ = try ConfigLoader.parse(AgentConfig.self, yaml: "node: hall-pi\n" + yaml); return [] } catch { return error.messages }
        }
        #expect(messages("max_tracked_beacons: 0\n") == ["max_tracked_beacons: must be between 1 and 1000000, found 0"])
        #expect(messages("max_tracked_beacons: 5000000\n") == ["max_tracked_beacons: must be between 1 and 1000000, found 5000000"])
        #expect(messages("max_tracked_beacons: lots\n") == ["max_tracked_beacons: expected an integer, found 'lots'"])
        // The IRK cache takes an entry per address any stranger advertises: bounded too.
        #expect(messages("irk_cache_size: 100000000\n") == ["irk_cache_size: must be 1 ... 1000000"])
        #expect(messages("irk_cache_size: 0\n") == ["irk_cache_size: must be 1 ... 1000000"])
        let listed = """
            beacons:
              - id: mac:a4c138aabbcc
              - id: mac:a4c138aabbcd
            irks:
              - {name: alice-phone, key: "0123456789abcdef0123456789abcdef"}

            """
        #expect(messages(listed + "max_tracked_beacons: 2\n")
                == ["max_tracked_beacons: must be at least the number of beacons and irks configured (3)"])
        #expect(messages(listed + "max_tracked_beacons: 3\n") == [])
    }

    /// An IRK entry missing its key still decodes far enough that a misspelt key beside it is
    /// named, with what it likely meant.
    @Test func aMisspeltIRKKeyIsNamedBesideTheMissingOne() throws {
        let yaml = "node: hall-pi\nirks:\n  - name: alice-phone\n    kye: ec0234a357c8ad05341010a60a397d9b\n"
        let error = try #require(throws: ConfigError.self) { try ConfigLoader.parse(AgentConfig.self, yaml: yaml) }
        #expect(error.messages.contains("irks[0]: missing required key 'key'"), "\(error.messages)")
        #expect(error.messages.contains("irks[0].kye: unknown key; did you mean 'key'?"), "\(error.messages)")
        #expect(!error.description.contains("ec0234a357c8ad05341010a60a397d9b"))
    }

    @Test func aRoomsDoorwaysAreCheckedWithTheirPaths() throws {
        func messages(_ doorways: String) -> [String] {
            let yaml = "rooms:\n  - name: hall\n    polygon: [[0,0],[4,0],[4,2],[0,2]]\n    doorways: \(doorways)\n"
            do { _ = try ConfigLoader.parse(AggregatorConfig.self, yaml: yaml); return [] } catch { return error.messages }
        }
        #expect(messages("[[[4,0.5],[4,1.5]], [[1,2],[2,2.4]]]") == [])
        #expect(messages("[[[4,0.5],[4,1.5],[4,2]]]") == ["rooms[0].doorways[0]: must be [[x, y], [x, y]] (2 points), found 3"])
        #expect(messages("[[[4,0.5],[4]]]") == ["rooms[0].doorways[0][1]: must be [x, y] (2 numbers), found 1"])
        #expect(messages("[[[4,0.5],[4,1e9]]]") == ["rooms[0].doorways[0][1]: coordinates must be within ±100000 m"])
        #expect(messages("[[[2,1],[3,1]]]")
                == ["rooms[0].doorways[0]: an end lies 1.00 m from the room's polygon; a doorway is a stretch of its outline"])
        let many = "[" + Array(repeating: "[[4,0.5],[4,1.5]]", count: 65).joined(separator: ", ") + "]"
        #expect(messages(many) == ["rooms[0].doorways: at most 64 per room, found 65"])
    }

    static let issueSite = SiteModel(
        rooms: [SiteModel.Room(name: "kitchen", floor: 0, polygon: [[6, 0], [12, 0], [12, 6], [6, 6]])],
        nodes: [SiteModel.Node(name: "kitchen-pi", room: "kitchen", position: [6.5, 1.0, 1.2], rxAdjust: 0)],
        beacons: [SiteModel.KnownBeacon(id: BeaconID("ibeacon:e06f95e4-fcfc-42c6-b4f8-f6bae87ea1a0-1233-45")!, name: "Cat", power: -59)])

    @Test func theIssuesAggregatorShapeLoads() throws {
        let c = try ConfigLoader.load(AggregatorConfig.self, from: try fixturePath("aggregator-minimal.yaml"))
        #expect(c.site == Self.issueSite)
        #expect(c.discovery == AggregatorConfig.Discovery(enabled: true, prefix: "homeassistant"))
        #expect(c.fusion == FusionSettings())
    }

    @Test func aJSONFileLoadsDirectly() throws {
        let c = try ConfigLoader.load(AggregatorConfig.self, from: try fixturePath("aggregator.json"))
        #expect(c.site == Self.issueSite)
        #expect(c.mqtt.broker == BrokerURL(host: "10.0.0.2"))
        #expect(c.mqtt.keepalive == 15)
    }

    @Test func fullAggregatorConfigLoads() throws {
        let c = try ConfigLoader.load(AggregatorConfig.self, from: try fixturePath("aggregator-full.yaml"))
        #expect(c.mqtt.broker == BrokerURL(host: "::1", port: 1884))
        #expect(c.rooms.map(\.name) == ["kitchen", "living-room", "bedroom"])
        #expect(c.rooms[2].floor == 1 && c.rooms[2].polygon == nil)
        #expect(c.nodes[1].rxAdjust == -2.5)
        #expect(c.nodes[1].beacon == BeaconID("ibeacon:e06f95e4-fcfc-42c6-b4f8-f6bae87ea1a0-900-2"))
        #expect(c.nodes[0].beacon == nil)
        #expect(c.nodes[2] == SiteModel.Node(name: "roaming-pi", room: nil))
        #expect(c.beacons.count == 2)
        var fusion = FusionSettings()
        (fusion.awayTimeout, fusion.initialWait, fusion.maxAge) = (45, 3, 12)
        (fusion.useGeometry, fusion.learnCalibration, fusion.fingerprints, fusion.learnedRooms) = (false, false, false, false)
        (fusion.pathLossExponent, fusion.wallLoss, fusion.floorLoss) = (2.5, 6, 18)
        (fusion.maxBeacons, fusion.autoNodes, fusion.maxNodes, fusion.forgetAfter) = (500, false, 64, 600)
        #expect(c.fusion == fusion)
        #expect(c.discovery == AggregatorConfig.Discovery(enabled: false, prefix: "ha"))
        #expect(c.output == AggregatorConfig.Output(refreshIntervalS: 120, enabled: [.mqttRoom]))
        #expect(c.partition == AggregatorConfig.Partition(floors: [0, 1], rooms: ["kitchen"]))
        #expect(c.standby == AggregatorConfig.Standby(enabled: true, leaseS: 20))
        #expect(c.inputs.espresense)
        #expect(c.log.level == .warning)
    }

    @Test func theBurstWindowIsTheLinksUnlessSet() throws {
        let dir = NSTemporaryDirectory() + "roomcast-window-\(getpid())"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        func load(_ scan: String) throws -> AgentConfig {
            let path = dir + "/agent.yaml"
            try "node: kitchen-pi\n\(scan)".write(toFile: path, atomically: true, encoding: .utf8)
            return try ConfigLoader.load(AgentConfig.self, from: path)
        }
        // Unset: the transport rests as long as how the link stamps its reports allows.
        #expect(try load("").radioOptions(record: nil).burstWindow == nil)
        #expect(try load("scan:\n  burst_window_ms: 20\n").radioOptions(record: nil).burstWindow == 0.02)
        do {
            _ = try load("scan:\n  burst_window_ms: 150\n")
            Issue.record("a 150 ms window was accepted")
        } catch let error as ConfigError {
            #expect(error.problems.map(\.path) == ["scan.burst_window_ms"])
        }
    }

    @Test func everyProblemOfTheBrokenAgentConfigIsReported() throws {
        let error = try loadError(AgentConfig.self, "agent-broken.yaml")
        let found = error.problems.map { "\($0.path)@\($0.location?.line ?? 0)" }
        #expect(found.sorted() == [
            "@2",  // missing required key 'node'
            "advertise.major@29", "advertise.uuid@28", "extra@32", "fingerprints.rules[0]@26", "irks[0].key@23",
            "log.level@31", "mqtt.broker@4", "mqtt.password@5", "mqtt.topic_prefix@7", "ranging.filter.kind@15",
            "ranging.near_m@17", "regions[0].uuid@20", "room@2", "scan.active@10", "scan.window_ms@12", "source@8",
        ])
        #expect(error.messages.contains("missing required key 'node'"))
        #expect(error.messages.contains("ranging.filter.kind: expected one of median_kalman, kalman, median, none, found 'kalmann'; did you mean 'kalman'?"))
        #expect(error.messages.contains("scan.active: expected true or false, found 'yes'"))
        #expect(error.messages.contains("room: must not contain '/'"))
        #expect(error.messages.contains("extra: unknown key"))
        #expect(error.messages.contains("advertise.major: expected an integer in 0...65535, found '70000'"))
    }

    @Test func everyProblemOfTheBrokenAggregatorConfigIsReported() throws {
        let error = try loadError(AggregatorConfig.self, "aggregator-broken.yaml")
        #expect(error.messages == [
            // Decoding, in file order.
            "mqtt.keepalive: expected an integer, found 'soon'",
            "rooms[0].floor: expected an integer, found '1.5'",
            "nodes[1].rx_adjust: expected a number, found 'loud'",
            "nodes[2]: missing required key 'name'",
            "beacons[0].id: 'ibeacon:not-a-uuid-1-2' is not a beacon id: ibeacon:<uuid, 8-4-4-4-12 hex digits>-<major 0…65535>-<minor 0…65535>",
            "standby.lease_s: expected a finite number, found '.inf'",
            // Unknown keys.
            "mqtt.brokr: unknown key; did you mean 'broker'?",
            "fusion.wall_los_db: unknown key; did you mean 'wall_loss_db'?",
            // Meaning, in file order.
            "rooms[0].polygon: needs at least 3 points, found 2",
            "rooms[1].name: duplicate name 'kitchen' (also rooms[0])",
            "rooms[2].name: must not contain '/'",
            "rooms[2].polygon[2]: must be [x, y] (2 numbers), found 1",
            "rooms[3].open_plan: 'kitchen_diner' names no other room; did you mean 'kitchen-diner'?",
            "rooms[4].open_plan: 'kitchen-diner' names no other room; did you mean 'kitchen_diner'?",
            "rooms[5].doorways[1]: an end lies 1.00 m from the room's polygon; a doorway is a stretch of its outline",
            "rooms[6].doorways: needs the room's polygon: a doorway is a stretch of its outline",
            "nodes[0].room: unknown room 'kitchn'; did you mean 'kitchen'?",
            "nodes[0].position: must be [x, y, z] (3 numbers), found 2",
            "nodes[1].name: duplicate name 'kitchen-pi' (also nodes[0])",
            "nodes[4].beacon: duplicate beacon 'ibeacon:e06f95e4-fcfc-42c6-b4f8-f6bae87ea1a0-900-1' (also nodes[3])",
            "nodes[5].beacon: 'mac:a4c138aabbcc' is also under beacons:; a node's own beacon calibrates the receivers and is never tracked",
            "beacons[1].power: must be between -127 and -1 dBm, found -300",
            "fusion.away_timeout_s: must be between 1 and 86400 s, found -5.0",
            "fusion.floor_loss_db: must be between 0 and 60 dB, found 90.0",
        ])
        // Each problem points at the marked line of the fixture.
        let text = try String(contentsOfFile: try fixturePath("aggregator-broken.yaml"), encoding: .utf8)
        let marked = Set(text.split(separator: "\n", omittingEmptySubsequences: false).enumerated()
            .filter { $0.element.contains("# problem") }.map { $0.offset + 1 })
        #expect(Set(error.problems.compactMap(\.location).compactMap(\.line)) == marked)
        // Printed one per line under a header naming the file.
        let lines = error.description.split(separator: "\n")
        #expect(lines.count == 25)
        #expect(lines[0].hasSuffix("aggregator-broken.yaml': 24 problems:"))
        #expect(lines.contains("  nodes[0].room: unknown room 'kitchn'; did you mean 'kitchen'? (line 23, column 11)"))
    }

    /// A one-Pi site that lists its node but not the room it stands in (the Pi's own agent config
    /// names it, which the aggregator does not read) placed nothing, with nothing in the log. A
    /// site where some node has a room keeps its room-less ones: they hear fingerprints.
    @Test func aSiteWhoseNodesHaveNoRoomIsRefused() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("roomcast-no-room-\(UUID().uuidString.prefix(8)).yaml").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        try "rooms:\n  - name: kitchen\nnodes:\n  - name: kitchen-pi\n".write(toFile: path, atomically: true, encoding: .utf8)
        do {
            _ = try ConfigLoader.load(AggregatorConfig.self, from: path)
            Issue.record("a site whose nodes have no room loaded")
        } catch {
            #expect(error.messages == ["nodes: no node has a room (room:) or a position (position:), so no beacon can be placed; give each node the room it stands in"])
        }
        try "rooms:\n  - name: kitchen\nnodes:\n  - name: kitchen-pi\n    room: kitchen\n  - name: hall-pi\n".write(toFile: path, atomically: true, encoding: .utf8)
        let c = try ConfigLoader.load(AggregatorConfig.self, from: path)
        #expect(c.nodes.map(\.room) == ["kitchen", nil])
    }

    @Test func duplicateKeysAreRejectedWithBothLines() throws {
        let error = try loadError(AgentConfig.self, "duplicate-keys.yaml")
        #expect(error.problems == [ConfigProblem(path: "mqtt.broker", message: "duplicate key (first at line 3)",
                                                 location: .position(line: 5, column: 3))])
    }

    /// A repeated key does not end the load: every repeat and every other problem is reported in one run.
    @Test func duplicateKeysAreReportedBesideEveryOtherProblem() throws {
        let yaml = "node: a\nmqtt:\n  broker: mqtt://a\n  keepalive: -1\n  broker: mqtt://b\nnode: b\nrestart_aftr_s: 5\n"
        do {
            _ = try ConfigLoader.parse(AgentConfig.self, yaml: yaml)
            Issue.record("a config with repeated keys loaded")
        } catch {
            #expect(error.problems.contains(ConfigProblem(path: "mqtt.broker", message: "duplicate key (first at line 3)",
                                                          location: .position(line: 5, column: 3))))
            #expect(error.problems.contains(ConfigProblem(path: "node", message: "duplicate key (first at line 1)",
                                                          location: .position(line: 6, column: 1))))
            #expect(error.messages.contains { $0.hasPrefix("mqtt.keepalive:") })
            #expect(error.messages.contains { $0.hasPrefix("restart_aftr_s: unknown key") })
        }
    }

    /// The first value of a repeated key is the one read, so the rest is checked as it will run.
    @Test func theFirstOfARepeatedKeyIsKept() throws {
        let document = try YAMLReader().read("a: 1\nb:\n  c: 2\na:\n  d: 3\n")
        #expect(document.problems.map(\.path) == ["a"])
        guard case .mapping(let entries)? = document.root?.kind else {
            Issue.record("not a mapping")
            return
        }
        #expect(entries.map(\.key) == ["a", "b"])
        #expect(entries[0].value.kind == .scalar("1", .plain))
    }

    @Test func aliasBombsAreRefused() throws {
        let error = try loadError(AgentConfig.self, "alias-bomb.yaml")
        #expect(error.messages == ["aliases expand to more than 10000 nodes; refusing the document"])
    }

    @Test func filesOverOneMegabyteAreRefused() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("roomcast-big-\(UUID()).yaml").path
        let big = "node: a\n" + String(repeating: "# padding\n", count: 110_000)
        try big.write(toFile: path, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        do {
            _ = try ConfigLoader.load(AgentConfig.self, from: path)
            Issue.record("loaded a file over 1 MB")
        } catch {
            #expect(error.file == path)
            #expect(error.messages == ["is larger than 1 MB; a config file should be a few kilobytes"])
        }
        #expect(throws: ConfigError.self) { try ConfigLoader.parse(AgentConfig.self, yaml: big) }
    }

    @Test func missingFilesDirectoriesAndBinaryAreClearErrors() throws {
        let dir = FileManager.default.temporaryDirectory.path
        let binary = FileManager.default.temporaryDirectory.appendingPathComponent("roomcast-bin-\(UUID()).yaml").path
        try Data([0x6e, 0x3a, 0x20, 0xff, 0xfe]).write(to: URL(fileURLWithPath: binary))
        defer { try? FileManager.default.removeItem(atPath: binary) }
        let cases = [("/nonexistent/roomcast.yaml", "no such file; create it or pass another path with --config"),
                     (dir, "is a directory, not a file"),
                     (binary, "is not UTF-8 text")]
        for (path, message) in cases {
            do {
                _ = try ConfigLoader.load(AgentConfig.self, from: path)
                Issue.record("loaded \(path)")
            } catch {
                #expect(error.messages == [message], "\(path)")
            }
        }
    }

    /// Random single-byte damage to a valid file (seeded, so reproducible)
    /// either still loads or yields problems; it never crashes or hangs.
    @Test func randomDamageNeverCrashes() throws {
        let text = try String(contentsOfFile: try fixturePath("aggregator-full.yaml"), encoding: .utf8)
        let alphabet = Array(":-[]{},&*!|>'\"#\n\t ?%@`0a".utf8)
        var seed: UInt64 = 0x5eed
        func next() -> Int {
            seed = seed &* 6364136223846793005 &+ 1442695040888963407
            return Int(truncatingIfNeeded: seed >> 33)
        }
        var bytes = Array(text.utf8)
        for round in 0..<400 {
            if round % 20 == 0 { bytes = Array(text.utf8) }
            bytes[next() % bytes.count] = alphabet[next() % alphabet.count]
            let damaged = String(decoding: bytes, as: UTF8.self)
            do {
                _ = try ConfigLoader.parse(AggregatorConfig.self, yaml: damaged)
            } catch {
                #expect(!error.problems.isEmpty)
            }
        }
    }

    /// Hostile or damaged files never crash the loader: every prefix of a
    /// valid file either loads or throws a ConfigError.
    @Test func everyTruncationOfAValidFileFailsCleanly() throws {
        let text = try String(contentsOfFile: try fixturePath("agent-full.yaml"), encoding: .utf8)
        let bytes = Array(text.utf8)
        var failures = 0
        for n in stride(from: 0, to: bytes.count, by: 3) {
            let prefix = String(decoding: bytes[..<n], as: UTF8.self)
            do {
                _ = try ConfigLoader.parse(AgentConfig.self, yaml: prefix)
            } catch {
                failures += 1
                #expect(!error.problems.isEmpty)
            }
        }
        #expect(failures > 0)
    }
}
