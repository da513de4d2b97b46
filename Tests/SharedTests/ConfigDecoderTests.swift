import Foundation
import Testing
@testable import Shared
@testable import RoomcastAgent
@testable import RoomcastAggregator
@testable import RoomcastConfig
@testable import RoomcastMQTT
@testable import RoomcastYAML

/// Small types exercising the decoder independently of the real configs.
private struct Point: Codable, Equatable {
    var x: Int
    var y: Int
}

private struct Doc: Codable, Equatable {
    var name: String
    var count: Int?
    var ratio: Double?
    var on: Bool?
    var small: UInt8?
    var points: [Point]?
    var tags: [String: Int]?
}

private func problems<T: Decodable>(_ type: T.Type, _ yaml: String) -> [String] {
    do {
        _ = try ConfigLoader.parse(T.self, yaml: yaml)
        return []
    } catch {
        return error.messages
    }
}

@Suite struct ConfigDecoderTests {
    @Test func decodesScalarsByTheRequestedType() throws {
        let d = try ConfigLoader.parse(Doc.self, yaml: "name: 007\ncount: 0x10\nratio: 3\non: True\nsmall: 255\ntags: {a: 1, b: -2}\n")
        #expect(d == Doc(name: "007", count: 16, ratio: 3, on: true, small: 255, points: nil, tags: ["a": 1, "b": -2]))
    }

    @Test func quotedNumbersStayStrings() {
        #expect(problems(Doc.self, "name: a\ncount: \"007\"\n") == ["count: expected an integer, found the string '007'"])
        #expect(problems(Doc.self, "name: a\non: 'true'\n") == ["on: expected true or false, found the string 'true'"])
    }

    /// Company ids may be written as numbers or as text such as "0x0059" (docs/fingerprints.md);
    /// the quoted form was refused as "expected an integer".
    /// `mqtt.protocol` names the versions it takes, as every other choice does.
    @Test func anUnknownProtocolVersionListsTheKnownOnes() {
        let found = problems(AgentConfig.self, "node: kitchen-pi\nmqtt:\n  protocol: \"3.1\"\n")
        #expect(found.contains { $0.contains("mqtt.protocol") && $0.contains("expected one of 5, 3.1.1") }, "\(found)")
    }

    @Test func companyIdsReadAsNumbersOrQuotedText() throws {
        let yaml = """
            node: kitchen-pi
            ibeacon_company_ids: ["0x0059", 0x004C, 76, "89", 0o131]
            fingerprints: {rules: [{name: bike, company_id: "0x0059", id: address}]}
            """
        let c = try ConfigLoader.parse(AgentConfig.self, yaml: yaml)
        #expect(c.ibeaconCompanyIds.map(\.value) == [0x59, 0x4C, 76, 89, 0x59])
        #expect(c.fingerprints.rules.first?.companyId?.value == 0x59)
        #expect(problems(AgentConfig.self, "node: kitchen-pi\nibeacon_company_ids: [{a: 1}]").count == 1)
    }

    /// Every 64-bit integer type's values are read, the unsigned ones' top half included.
    @Test func integersOfEveryWidthAreRead() {
        #expect(DecodingState.readInteger("18446744073709551615") == .value(Int128(UInt64.max)))
        #expect(DecodingState.readInteger("-9223372036854775808") == .value(Int128(Int64.min)))
        #expect(DecodingState.readInteger("18446744073709551616") == .tooLarge)
        #expect(DecodingState.readInteger("0x10") == .value(16) && DecodingState.readInteger("-0o17") == .value(-15))
        #expect(DecodingState.readInteger("12a") == .notAnInteger && DecodingState.readInteger("") == .notAnInteger)
    }

    @Test(arguments: [
        ("count: 1.5", "count: expected an integer, found '1.5'"),
        ("count: 99999999999999999999", "count: expected an integer in \(Int.min)...\(Int.max), found '99999999999999999999'"),
        ("small: -99999999999999999999", "small: expected an integer in 0...255, found '-99999999999999999999'"),
        ("small: +-5", "small: expected an integer, found '+-5'"),
        ("count: 0x1FFFFFFFFFFFFFFFFF", "count: expected an integer in \(Int.min)...\(Int.max), found '0x1FFFFFFFFFFFFFFFFF'"),
        ("count: 0o19", "count: expected an integer, found '0o19'"),
        ("small: 256", "small: expected an integer in 0...255, found '256'"),
        ("small: -1", "small: expected an integer in 0...255, found '-1'"),
        ("ratio: .nan", "ratio: expected a finite number, found '.nan'"),
        ("ratio: 1e999", "ratio: expected a finite number, found '1e999'"),
        ("ratio: abc", "ratio: expected a number, found 'abc'"),
        ("on: yes", "on: expected true or false, found 'yes'"),
        ("points: 3", "points: expected a list, found '3'"),
        ("points: [[1, 2]]", "points[0]: expected a mapping, found a list"),
        ("count: [1]", "count: expected an integer, found a list"),
    ])
    func typeErrorsCarryPathAndLine(_ line: String, _ message: String) throws {
        do {
            _ = try ConfigLoader.parse(Doc.self, yaml: "name: a\n\(line)\n")
            Issue.record("decoded")
        } catch {
            #expect(error.messages == [message])
            #expect(error.problems.first?.location?.line == 2)
        }
    }

    @Test func everyBadListElementIsReportedNotOnlyTheFirst() {
        let yaml = """
            name: a
            points:
              - {x: 1, y: 2}
              - {x: one, y: 2}
              - {x: 1}
              - {x: 1, y: 2, z: 3}
              - {x: 1, y: [2]}
            """
        #expect(problems(Doc.self, yaml) == [
            "points[1].x: expected an integer, found 'one'",
            "points[2]: missing required key 'y'",
            "points[4].y: expected an integer, found a list",
            "points[3].z: unknown key",
        ])
    }

    @Test func unknownKeysSuggestTheClosestKnownKey() {
        #expect(problems(Doc.self, "name: a\ncuont: 1\nzzz: 2\n") == ["cuont: unknown key; did you mean 'count'?", "zzz: unknown key"])
    }

    @Test func nullMeansAbsentAndAnEmptySectionMeansDefaults() throws {
        #expect(try ConfigLoader.parse(Doc.self, yaml: "name: a\ncount: ~\n").count == nil)
        let agent = try ConfigLoader.parse(AgentConfig.self, yaml: "node: n\nmqtt:\nscan: {}\n")
        #expect(agent.mqtt == MQTTConfig())
        #expect(agent.scan == AgentConfig.Scan())
    }

    @Test func aMissingRequiredStringIsReportedOnce() {
        #expect(problems(AgentConfig.self, "room: x\n") == ["missing required key 'node'"])
        #expect(problems(AgentConfig.self, "node: ''\n") == ["node: must not be empty"])
    }

    /// Names that are topic levels are checked as such; a beacon's or a region's name is only
    /// shown ("Tag #3", "Up/Down"), and checked as a name people read, by the intake's rule for
    /// control characters (a C1 one too: the aggregator refuses every reading that carries it).
    @Test func everyNameIsCheckedForWhatItBecomes() {
        let yaml = """
            node: "a+b"
            mqtt: {topic_prefix: "home//x"}
            regions: [{name: "Up/Down", uuid: e06f95e4-fcfc-42c6-b4f8-f6bae87ea1a0}, {name: "r\\u0007", uuid: e06f95e4-fcfc-42c6-b4f8-f6bae87ea1a0}]
            beacons: [{id: "mac:a4c138aabbcc", name: "Tag #3"}, {id: "mac:a4c138aabbdd", name: "Tag\\u0085"}]
            irks: [{name: "", key: "0123456789abcdef0123456789abcdef"}]
            fingerprints: {rules: [{name: "t/t", local_name: x}]}
            """
        #expect(problems(AgentConfig.self, yaml) == [
            "node: must not contain '+'",
            "mqtt.topic_prefix: level '' must not be empty",
            "regions[1].name: must not contain control characters",
            "beacons[1].name: must not contain control characters",
            "irks[0].name: must be lowercase letters, digits, '-', '_' or '.' (not shown: irks entries hold keys)",
            "fingerprints.rules[0].name: 't/t' must be lowercase letters, digits, '-', '_' or '.'",
        ])
    }

    @Test func siteReferencesAndPartitionsAreChecked() {
        let yaml = """
            rooms: [{name: hall, floor: 2}]
            nodes: [{name: n, room: hal}, {name: m, room: attic}]
            partition: {floors: [2, 3], rooms: [hall, cellar]}
            beacons: [{id: "mac:a4c138aabbcc"}, {id: "mac:a4c138aabbcc"}]
            """
        #expect(problems(AggregatorConfig.self, yaml) == [
            "nodes[0].room: unknown room 'hal'; did you mean 'hall'?",
            "nodes[1].room: unknown room 'attic'",
            "partition.floors[1]: no room is on floor 3",
            "partition.rooms[1]: unknown room 'cellar'",
            "beacons[1].id: duplicate id 'mac:a4c138aabbcc' (also beacons[0])",
        ])
    }

    /// A partition whose rooms no listed node stands in heard every node, and made each a room
    /// of its name: its presence fought the partition that has the node. Now a config error, and
    /// such a core refuses readings of nodes it does not have.
    @Test func aPartitionWithoutNodesIsRefused() throws {
        let yaml = """
            rooms: [{name: hall, floor: 0}, {name: attic, floor: 1}]
            nodes: [{name: attic-pi, room: attic}, {name: hall-pi, position: [1, 1, 2]}]
            partition: {floors: [0]}
            """
        #expect(problems(AggregatorConfig.self, yaml) == [
            "partition: no node stands in the partition's rooms; a partition hears only the nodes whose room: is one of its rooms",
        ])
        #expect(problems(AggregatorConfig.self, "rooms: [{name: hall}]\nnodes: [{name: hall-pi, room: hall}]\npartition: {floors: []}\n").count == 1)
        var config = AggregatorConfig(site: SiteModel(
            rooms: [.init(name: "hall", floor: 0), .init(name: "attic", floor: 1)],
            nodes: [.init(name: "attic-pi", room: "attic"), .init(name: "hall-pi", room: nil, position: [1, 1, 2])]))
        config.partition.floors = [0]
        var core = config.makeCore()
        let reading = BeaconReading(id: BeaconID("mac:a4c138aabbcc")!, node: "hall-pi", ts: 100, seq: 1, rssi: -60, rssiFiltered: -60,
                                    power: -59, distance: 1, proximity: .near, kind: .iBeacon, mac: "a4:c1:38:aa:bb:cc")
        let topic = Topics().nodeBeacon("hall-pi", reading.id)
        let (_, rejection) = try core.handle(topic: topic, payload: try WireFormat.encode(reading), now: 100)
        #expect(rejection != nil, "a node of no partition room is refused")
    }

    /// A finite but huge filter variance passed, then overflowed in the Kalman filter: every
    /// filtered level NaN, published as null.
    @Test func filterVariancesHaveAnUpperBound() {
        #expect(problems(AgentConfig.self, "node: n\nranging: {filter: {process_noise: 1e308, measurement_noise: 2e4}}\n") == [
            "ranging.filter.process_noise: must be at most 10000 dB² per second",
            "ranging.filter.measurement_noise: must be at most 10000 dB²",
        ])
    }

    /// Brokers keep `$` topics: a prefix there is refused by every publish, and `$share/` makes
    /// the subscriptions shared ones.
    @Test func aTopicPrefixStartingWithDollarIsRefused() {
        #expect(problems(AggregatorConfig.self, "mqtt: {topic_prefix: \"$SYS/roomcast\"}\ndiscovery: {prefix: \"$share/ha\"}\n") == [
            "mqtt.topic_prefix: must not start with '$' (brokers keep those topics: $SYS, $share)",
            "discovery.prefix: must not start with '$' (brokers keep those topics: $SYS, $share)",
        ])
    }

    /// Names that Home Assistant's ids would make one device (only `a-z0-9` is kept) are refused
    /// with discovery on, each with its path and the other name; with discovery off they are fine.
    @Test func namesThatWouldBeOneHomeAssistantDeviceAreRefused() throws {
        let yaml = """
            rooms: [{name: Office}, {name: office}, {name: kids-room}, {name: kids_room}, {name: кухня}, {name: спальня}]
            nodes: [{name: hall-pi, room: Office}, {name: hall_pi, room: office}]
            beacons: [{id: "irk:anna-phone"}, {id: "irk:anna_phone"}]
            """
        #expect(problems(AggregatorConfig.self, yaml) == [
            "rooms[1].name: 'office' and rooms[0] 'Office' are one Home Assistant device (roomcast_room_office): rename one, using letters a-z and digits that differ, and keep the name people read in its display_name",
            "rooms[3].name: 'kids_room' and rooms[2] 'kids-room' are one Home Assistant device (roomcast_room_kids_room): rename one, using letters a-z and digits that differ, and keep the name people read in its display_name",
            "rooms[5].name: 'спальня' and rooms[4] 'кухня' are one Home Assistant device (roomcast_room__): rename one, using letters a-z and digits that differ, and keep the name people read in its display_name",
            "nodes[1].name: 'hall_pi' and nodes[0] 'hall-pi' are one Home Assistant device (roomcast_node_hall_pi): rename one, using letters a-z and digits that differ, and keep the name people read in its display_name",
            "beacons[1].id: 'irk:anna_phone' and beacons[0] 'irk:anna-phone' are one Home Assistant device (roomcast_beacon_irk_anna_phone): rename one, using letters a-z and digits that differ",
        ])
        #expect(problems(AggregatorConfig.self, yaml + "\ndiscovery: {enabled: false}").isEmpty)
    }

    /// A beacon's room sensor shows a room's title or `Away`: a room shown as `Away` could not
    /// be told from away there. Two rooms shown alike (`living` and `lounge`) stay allowed: the
    /// teaching select tells them apart, and configs that have them keep working.
    @Test func aRoomShownAsAwayIsRefused() throws {
        let yaml = """
            rooms: [{name: away}, {name: living}, {name: lounge}, {name: porch, display_name: AWAY}]
            """
        #expect(problems(AggregatorConfig.self, yaml) == [
            "rooms[0]: is shown in Home Assistant as 'Away', which a room sensor shows for away; give it a display_name",
            "rooms[3]: is shown in Home Assistant as 'Away', which a room sensor shows for away; give it a display_name",
        ])
        #expect(problems(AggregatorConfig.self, yaml + "\ndiscovery: {enabled: false}").isEmpty)
    }

    /// A beacon's plain room topic says `not_home` for away: a room of that name could not be told
    /// from it, with discovery on or off.
    @Test func aRoomNamedAsAwayIsRefused() {
        #expect(problems(AggregatorConfig.self, "rooms: [{name: not_home}]\ndiscovery: {enabled: false}\n") == [
            "rooms[0].name: 'not_home' is what a beacon's room topic says for away; name the room otherwise",
        ])
    }

    /// Positions put floor N three metres a storey above the ground floor's floor. A node whose z
    /// is its height above its own floor, or floors numbered from 1 at the ground, placed every
    /// room a storey off without a word; now the config says so, with the z that was meant.
    @Test func aNodesHeightMustBeOnItsRoomsFloor() {
        let yaml = """
            rooms: [{name: hall, floor: 0}, {name: bedroom, floor: 1}]
            nodes:
              - {name: hall-pi, room: hall, position: [1, 1, 1.2]}
              - {name: bedroom-pi, room: bedroom, position: [1, 1, Z]}
            discovery: {enabled: false}
            """
        #expect(problems(AggregatorConfig.self, yaml.replacingOccurrences(of: "Z", with: "4.2")).isEmpty)
        #expect(problems(AggregatorConfig.self, yaml.replacingOccurrences(of: "Z", with: "1.2")) == [
            "nodes[1].position: z 1.2 m is not on its room's floor 1, which spans 3…6 m: z counts from floor 0's floor (the ground floor's), 3 m a storey; a node 1.2 m above floor 1's floor is at z 4.2",
        ])
        // A basement, and a node on the ceiling of the floor below's stairwell: within a metre is its floor.
        let basement = "rooms: [{name: cellar, floor: -1}]\nnodes: [{name: cellar-pi, room: cellar, position: [0, 0, -1.5]}, {name: stair-pi, room: cellar, position: [0, 0, 0.6]}]\ndiscovery: {enabled: false}\n"
        #expect(problems(AggregatorConfig.self, basement).isEmpty)
        // A floor past every range is its range's problem, not a crash working out its height.
        let huge = "rooms: [{name: attic, floor: 9223372036854775807}]\nnodes: [{name: attic-pi, room: attic, position: [1, 1, 1]}]\ndiscovery: {enabled: false}\n"
        #expect(problems(AggregatorConfig.self, huge) == ["rooms[0].floor: must be between -100 and 300, found 9223372036854775807"])
    }

    /// A Pi moved and given its new room, but not its new position, was placed where it stood
    /// before without a word; a position outside its room's polygon is now named. One on a wall
    /// may stand a wall's width outside (the wall's other face).
    @Test func aNodesPositionMustBeInItsRoomsPolygon() {
        let yaml = """
            rooms:
              - {name: hall, polygon: [[0, 0], [4, 0], [4, 3], [0, 3]]}
              - {name: kitchen, polygon: [[4, 0], [8, 0], [8, 3], [4, 3]]}
            nodes:
              - {name: hall-pi, room: hall, position: [1, 1, 1]}
              - {name: kitchen-pi, room: kitchen, position: [X, 1, 1]}
            discovery: {enabled: false}
            """
        #expect(problems(AggregatorConfig.self, yaml.replacingOccurrences(of: "X", with: "6")).isEmpty)
        #expect(problems(AggregatorConfig.self, yaml.replacingOccurrences(of: "X", with: "3.7")).isEmpty, "on the wall")
        #expect(problems(AggregatorConfig.self, yaml.replacingOccurrences(of: "X", with: "2")) == [
            "nodes[1].position: x, y lies 2.00 m outside its room 'kitchen''s polygon: give the position it has in the room it stands in",
        ])
        // A room without a polygon has no outline to judge by.
        let open = "rooms: [{name: hall}]\nnodes: [{name: hall-pi, room: hall, position: [50, 50, 1]}]\ndiscovery: {enabled: false}\n"
        #expect(problems(AggregatorConfig.self, open).isEmpty)
    }

    /// `beacons[].sleeps_when_still` reaches fusion's site; off unless said, a typo is named,
    /// and a site without it writes as before.
    @Test func aBeaconThatSleepsWhenStillIsDeclaredPerBeacon() throws {
        let yaml = """
            beacons:
              - {id: "ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0-1-1", name: Keys, sleeps_when_still: true}
              - {id: "ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0-1-2", name: Phone}
            """
        let config = try ConfigLoader.parse(AggregatorConfig.self, yaml: yaml)
        #expect(config.site.beacons.map(\.sleepsWhenStill) == [true, false])
        #expect(problems(AggregatorConfig.self, yaml.replacingOccurrences(of: "sleeps_when_still: true", with: "sleep_when_still: true")) == [
            "beacons[0].sleep_when_still: unknown key; did you mean 'sleeps_when_still'?",
        ])
        #expect(problems(AggregatorConfig.self, yaml.replacingOccurrences(of: "sleeps_when_still: true", with: "sleeps_when_still: 2")).count == 1)
        let phone = try JSONEncoder().encode(config.site.beacons[1])
        #expect(String(decoding: phone, as: UTF8.self).contains("sleeps") == false)
        let keys = try JSONEncoder().encode(config.site.beacons[0])
        #expect(try JSONDecoder().decode(SiteModel.KnownBeacon.self, from: keys) == config.site.beacons[0])
    }

    @Test func peopleDisplayNamesAndDiscoveryMode() throws {
        let yaml = """
            rooms: [{name: living, area: "Ground floor"}, {name: kitchen, display_name: ""}]
            nodes: [{name: kitchen-pi, room: kitchen, beacon: "mac:a4c138000001"}]
            beacons: [{id: "mac:a4c138aabbcc"}, {id: "mac:a4c138aabbdd"}]
            people:
              - {name: Alice Smith, beacons: ["mac:a4c138aabbcc", "mac:a4c138aabbee"]}
              - {name: Bob, beacons: ["mac:a4c138aabbcc", "mac:a4c138000001"]}
              - {name: "!!", beacons: []}
              - {name: Bob Too, id: bob, beacons: ["mac:a4c138aabbdd"]}
            discovery: {mode: entity}
            """
        #expect(problems(AggregatorConfig.self, yaml) == [
            "rooms[1].display_name: must not be empty",
            "people[0].beacons[1]: 'mac:a4c138aabbee' is not under beacons:; list it there so it is tracked",
            "people[1].beacons[0]: 'mac:a4c138aabbcc' is already alice_smith's; a beacon belongs to one person",
            "people[1].beacons[1]: 'mac:a4c138000001' is not under beacons:; list it there so it is tracked",
            "people[1].beacons[1]: 'mac:a4c138000001' is a node's own beacon (nodes[].beacon), which is never tracked",
            "people[2].id: could not be derived from the name '!!' (no letter a-z or digit in it); give an id of letters a-z and digits",
            "people[2].beacons: must list at least one beacon id",
            "people[3].id: duplicate id 'bob' (also people[1])",
        ])
        let ok = try ConfigLoader.parse(AggregatorConfig.self, yaml: """
            rooms: [{name: living}, {name: bath, area: Upstairs}]
            beacons: [{id: "mac:a4c138aabbcc"}]
            people: [{name: Alice Smith, beacons: ["mac:a4c138aabbcc"]}]
            discovery: {mode: entity, node_distances: true}
            """)
        #expect(ok.validate().isEmpty)
        #expect(ok.people[0].id == "alice_smith" && ok.site.people == ok.people)
        #expect(ok.rooms[0].title == "Living Room" && ok.rooms[0].area == nil)
        #expect(ok.rooms[1].title == "Bathroom" && ok.rooms[1].area == "Upstairs")
        #expect(ok.discovery.mode == .entity && ok.discovery.nodeDistances)
        #expect(problems(AggregatorConfig.self, "discovery: {mode: devices}").first?.contains("did you mean 'device'") == true)
    }

    @Test func regionAndFingerprintRules() {
        let yaml = """
            node: n
            regions:
              - {name: a}
              - {name: b, uuid: e06f95e4-fcfc-42c6-b4f8-f6bae87ea1a0, namespace: edd1ebeac04e5defa017}
              - {name: c, namespace: abcd, minor: 1}
            fingerprints:
              builtins: [tile]
              rules:
                - {name: f, manufacturer_prefix: "12z", service_uuid: "12345"}
            """
        #expect(problems(AgentConfig.self, yaml) == [
            "regions[0]: give uuid (iBeacon/AltBeacon) or namespace (Eddystone)",
            "regions[1]: give uuid or namespace, not both",
            "regions[2].namespace: not 20 hex digits: 'abcd'",
            "regions[2].minor: needs major",
            "fingerprints.builtins[0]: unknown 'tile' (known: all, ruuvi, xiaomi, atc, estimote)",
            "fingerprints.rules[0].manufacturer_prefix: not hex",
            "fingerprints.rules[0].manufacturer_prefix: needs company_id",
            "fingerprints.rules[0].service_uuid: not a UUID: '12345'",
        ])
    }

    @Test func encodingTheEffectiveConfigHidesSecrets() throws {
        var config = AgentConfig(node: "n")
        config.mqtt.password = "hunter2"
        config.mqtt.broker = try BrokerURL(parsing: "mqtt://u:pw@h")
        let text = String(decoding: try WireFormat.encode(config), as: UTF8.self)
        #expect(!text.contains("hunter2"))
        #expect(!text.contains("pw@"))
        #expect(text.contains("\"password\":\"***\""))
        let line = ConfigLoader.describe(config)
        #expect(line.contains("\"broker\":\"mqtt://u:***@h:1883\""))
        #expect(!line.contains("hunter2"))
    }
}
