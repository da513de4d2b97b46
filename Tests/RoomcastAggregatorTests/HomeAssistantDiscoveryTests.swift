import Foundation
import Shared
import Testing
@testable import RoomcastAggregator

/// The discovery payloads themselves; what Home Assistant makes of them is HomeAssistantTests.
@Suite struct HomeAssistantDiscoveryTests {
    static let phone = BeaconID("ibeacon:e06f95e4-fcfc-42c6-b4f8-f6bae87ea1a0-1233-46")!
    static let site = SiteModel(
        rooms: [.init(name: "living"), .init(name: "kitchen"), .init(name: "bath", area: "Upstairs Bathroom"),
                .init(name: "office", floor: 1, displayName: "Study")],
        nodes: [.init(name: "kitchen-pi", room: "kitchen"), .init(name: "bath-pi", room: "bath", displayName: "Bath node")],
        beacons: [.init(id: cat, name: "Cat"), .init(id: phone, name: "Alice's phone")],
        people: [.init(name: "Alice Smith", beacons: [phone])])

    func discovery(_ mode: AggregatorConfig.Discovery.Mode = .device) -> HomeAssistantDiscovery {
        HomeAssistantDiscovery(topics: Topics(), mode: mode, site: Self.site)
    }

    func json(_ m: OutboundMessage) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(m.payload)) as? [String: Any])
    }

    func device(_ id: String, in configs: [OutboundMessage]) throws -> [String: Any] {
        try json(try #require(configs.first { $0.topic == "homeassistant/device/\(id)/config" }, "no config for \(id)"))
    }

    func component(_ key: String, of device: [String: Any]) throws -> [String: Any] {
        try #require((device["cmps"] as? [String: Any])?[key] as? [String: Any], "no component \(key)")
    }

    @Test func oneRetainedConfigPerDeviceWithOriginAndSharedAvailability() throws {
        let all = try discovery().siteConfigs(Self.site)
        #expect(all.allSatisfy { $0.retain && $0.topic.hasPrefix("homeassistant/device/roomcast_") && $0.topic.hasSuffix("/config") })
        // The aggregator, Alice, the cat (the phone is Alice's: no device of its own), 4 rooms, 2 nodes.
        #expect(all.count == 1 + 1 + 1 + 4 + 2)
        #expect(!all.contains { $0.topic.contains("1233_46") })
        let cat = try device("roomcast_beacon_ibeacon_e06f95e4_fcfc_42c6_b4f8_f6bae87ea1a0_1233_45", in: all)
        #expect((cat["origin"] as? [String: Any])?["name"] as? String == "Roomcast")
        let shared = try #require(cat["availability"] as? [[String: Any]])
        #expect(shared.map { $0["topic"] as? String } == ["roomcast/aggregator/status"])
        #expect((cat["device"] as? [String: Any])?["name"] as? String == "Cat")
        // Unique ids are unique across the site, and keep the form they always had.
        var ids: [String] = []
        for m in all { for (_, c) in try json(m)["cmps"] as? [String: [String: Any]] ?? [:] { ids.append(c["unique_id"] as? String ?? "") } }
        #expect(Set(ids).count == ids.count)
        #expect(ids.contains("roomcast_ibeacon_e06f95e4_fcfc_42c6_b4f8_f6bae87ea1a0_1233_45_tracker"))
        #expect(ids.contains("roomcast_room_kitchen_occupancy") && ids.contains("roomcast_node_kitchen_pi_connectivity"))
    }

    /// Every config the site publishes, in either mode, names its aggregator status topic: how
    /// an aggregator tells its own configs on the broker from another site's (another topic
    /// prefix, the same `roomcast_` ids), which its clean-up must leave alone.
    @Test(arguments: [AggregatorConfig.Discovery.Mode.device, .entity])
    func everyConfigIsRecognisedAsThisSitesAndNoOtherSitesIs(mode: AggregatorConfig.Discovery.Mode) throws {
        let ours = HomeAssistantDiscovery(topics: Topics(), mode: mode, site: Self.site)
        let other = HomeAssistantDiscovery(topics: Topics(prefix: "site-b/roomcast"), mode: mode, site: Self.site)
        let configs = try ours.siteConfigs(Self.site) + (try ours.beaconConfigs(id: cat, name: "Cat"))
        #expect(!configs.isEmpty)
        for m in configs {
            #expect(ours.isThisSites(m.payload), "\(m.topic)")
            #expect(!other.isThisSites(m.payload), "\(m.topic)")
        }
    }

    @Test func aPersonHasATrackerInPresenceTermsARoomEnumAndALastSeenTimestamp() throws {
        let alice = try device("roomcast_person_alice_smith", in: try discovery().personConfigs(Self.site.people[0]))
        #expect((alice["device"] as? [String: Any])?["name"] as? String == "Alice Smith")
        let tracker = try component("roomcast_person_alice_smith", of: alice)
        #expect(tracker["p"] as? String == "device_tracker")
        #expect(tracker.keys.contains("name") && tracker["name"] is NSNull, "null name: the device's name alone")
        #expect(tracker["state_topic"] as? String == "roomcast/people/alice_smith")
        #expect(tracker["value_template"] as? String == "{{ value_json.state }}")
        #expect(tracker["payload_home"] as? String == "home" && tracker["payload_not_home"] as? String == "not_home")
        #expect(tracker["default_entity_id"] as? String == "device_tracker.alice_smith")
        #expect(tracker["object_id"] as? String == "alice_smith")
        // Unavailable, never not_home, while the presence is held without evidence.
        #expect(tracker["availability_mode"] as? String == "all")
        let held = try #require((tracker["availability"] as? [[String: Any]])?.last)
        #expect(held["topic"] as? String == "roomcast/people/alice_smith")
        #expect((held["value_template"] as? String)?.contains("nodes_offline") == true)

        let room = try component("roomcast_person_alice_smith_room", of: alice)
        #expect(room["name"] as? String == "Room" && room["default_entity_id"] as? String == "sensor.alice_smith_room")
        #expect(room["device_class"] as? String == "enum")
        #expect(room["options"] as? [String] == ["Living Room", "Kitchen", "Bathroom", "Study", "Away"])
        let seen = try component("roomcast_person_alice_smith_last_seen", of: alice)
        #expect(seen["device_class"] as? String == "timestamp")
    }

    /// A site that lists rooms but no nodes makes a room of each node it hears, which no list
    /// of options can hold: its room sensors are plain text (an enum's state outside its options
    /// is refused by Home Assistant, and the sensor stops updating).
    @Test func aSiteThatListsNoNodesHasRoomSensorsWithoutOptions() throws {
        var open = Self.site
        open.nodes = []
        let d = HomeAssistantDiscovery(topics: Topics(), site: open)
        let alice = try device("roomcast_person_alice_smith", in: try d.personConfigs(open.people[0]))
        let room = try component("roomcast_person_alice_smith_room", of: alice)
        #expect(room["device_class"] == nil && room["options"] == nil)
        #expect((room["value_template"] as? String)?.contains("Kitchen") == true, "listed rooms still show their names")
        let cat = try device("roomcast_beacon_ibeacon_e06f95e4_fcfc_42c6_b4f8_f6bae87ea1a0_1233_45", in: try d.siteConfigs(open))
        let catRoom = try #require((cat["cmps"] as? [String: [String: Any]])?.values.first { ($0["unique_id"] as? String)?.hasSuffix("_room") == true })
        #expect(catRoom["device_class"] == nil && catRoom["options"] == nil)
    }

    @Test func roomsLandInAreasNamedAsPeopleNameThem() throws {
        let all = try discovery().siteConfigs(Self.site)
        func dev(_ room: String) throws -> [String: Any] { try #require(try device("roomcast_room_\(room)", in: all)["device"] as? [String: Any]) }
        #expect(try dev("living")["name"] as? String == "Living Room")
        #expect(try dev("living")["suggested_area"] as? String == "Living Room")
        #expect(try dev("kitchen")["suggested_area"] as? String == "Kitchen")
        #expect(try dev("bath")["name"] as? String == "Bathroom")
        #expect(try dev("bath")["suggested_area"] as? String == "Upstairs Bathroom")
        #expect(try dev("office")["name"] as? String == "Study")
        let kitchen = try device("roomcast_room_kitchen", in: all)
        #expect(try component("roomcast_room_kitchen_occupancy", of: kitchen)["default_entity_id"] as? String
                == "binary_sensor.kitchen_occupancy")
        // With people configured: people and the other beacons counted apart too.
        #expect(try component("roomcast_room_kitchen_people", of: kitchen)["default_entity_id"] as? String == "sensor.kitchen_people")
        #expect(try component("roomcast_room_kitchen_unassigned", of: kitchen)["name"] as? String == "Unassigned beacons")
        // Nodes join their room's area, named from their id unless given a display name.
        let node = try device("roomcast_node_kitchen_pi", in: all)
        #expect((node["device"] as? [String: Any])?["name"] as? String == "Kitchen Pi")
        #expect((node["device"] as? [String: Any])?["suggested_area"] as? String == "Kitchen")
        #expect(try component("roomcast_node_kitchen_pi_connectivity", of: node)["default_entity_id"] as? String
                == "binary_sensor.kitchen_pi_connectivity")
        #expect(try component("roomcast_node_kitchen_pi_uptime", of: node)["device_class"] as? String == "duration")
        #expect(try component("roomcast_node_kitchen_pi_last_seen", of: node)["device_class"] as? String == "timestamp")
        // Its retained telemetry held the last rates of a node stopped or lost: they read
        // unavailable while the node is offline; connectivity and last seen say so, and since when.
        for rate in ["adverts", "beacons_in_view", "uptime"] {
            let sensor = try component("roomcast_node_kitchen_pi_\(rate)", of: node)
            let topics = (sensor["availability"] as? [[String: Any]])?.compactMap { $0["topic"] as? String }
            #expect(topics == ["roomcast/aggregator/status", "roomcast/nodes/kitchen-pi/status"], "\(rate): \(String(describing: topics))")
            #expect(sensor["availability_mode"] as? String == "all")
        }
        // What changes at every telemetry is registered disabled; what changes with the node's state is not.
        for ticking in ["adverts", "uptime", "last_seen"] {
            #expect(try component("roomcast_node_kitchen_pi_\(ticking)", of: node)["enabled_by_default"] as? Bool == false, "\(ticking)")
        }
        for kept in ["connectivity", "beacons_in_view"] {
            #expect(try component("roomcast_node_kitchen_pi_\(kept)", of: node)["enabled_by_default"] == nil, "\(kept)")
        }
        for kept in ["connectivity", "last_seen"] {
            #expect(try component("roomcast_node_kitchen_pi_\(kept)", of: node)["availability"] == nil, "\(kept)")
        }
        let bathNode = try device("roomcast_node_bath_pi", in: all)
        #expect((bathNode["device"] as? [String: Any])?["suggested_area"] as? String == "Upstairs Bathroom")
        #expect(try component("roomcast_node_bath_pi_connectivity", of: bathNode)["default_entity_id"] as? String
                == "binary_sensor.bath_node_connectivity")
    }

    /// A bathroom on each floor, both shown as "Bathroom": one Home Assistant area held both rooms'
    /// devices (and their nodes), two devices of one name, the second's entities `_2`. Each is
    /// named as the room sensors' options name it, with its id beside the title (titles compared
    /// as Home Assistant compares areas, whatever their case); one given an area keeps it.
    @Test func twoRoomsOfOneTitleAreTwoDevicesInTwoAreas() throws {
        let site = SiteModel(
            rooms: [.init(name: "bath_down", displayName: "Bathroom"), .init(name: "bath_up", floor: 1, displayName: "Bathroom"),
                    .init(name: "loo", displayName: "bathroom", area: "Utility"), .init(name: "kitchen")],
            nodes: [.init(name: "down-pi", room: "bath_down"), .init(name: "up-pi", room: "bath_up")],
            beacons: [.init(id: cat, name: "Cat")])
        let all = try HomeAssistantDiscovery(topics: Topics(), mode: .device, site: site).siteConfigs(site)
        func dev(_ id: String) throws -> [String: Any] { try #require(try device(id, in: all)["device"] as? [String: Any]) }
        #expect(try dev("roomcast_room_bath_down")["name"] as? String == "Bathroom (bath_down)")
        #expect(try dev("roomcast_room_bath_down")["suggested_area"] as? String == "Bathroom (bath_down)")
        #expect(try dev("roomcast_room_bath_up")["suggested_area"] as? String == "Bathroom (bath_up)")
        #expect(try dev("roomcast_room_loo")["suggested_area"] as? String == "Utility")
        #expect(try dev("roomcast_room_loo")["name"] as? String == "bathroom (loo)", "titles told apart whatever their case")
        #expect(try dev("roomcast_room_kitchen")["name"] as? String == "Kitchen", "a title of its own is shown as it is")
        #expect(try dev("roomcast_node_up_pi")["suggested_area"] as? String == "Bathroom (bath_up)")
        let ids = try ["bath_down", "bath_up"].map { room in
            try component("roomcast_room_\(room)_occupancy", of: try device("roomcast_room_\(room)", in: all))["default_entity_id"] as? String
        }
        #expect(ids == ["binary_sensor.bathroom_bath_down_occupancy", "binary_sensor.bathroom_bath_up_occupancy"])
    }

    @Test func eachTrackedBeaconHasASelectThatTeachesTheRoomItIsIn() throws {
        let all = try discovery().siteConfigs(Self.site)
        let catDevice = try device("roomcast_beacon_ibeacon_e06f95e4_fcfc_42c6_b4f8_f6bae87ea1a0_1233_45", in: all)
        let teach = try component("roomcast_ibeacon_e06f95e4_fcfc_42c6_b4f8_f6bae87ea1a0_1233_45_teach", of: catDevice)
        #expect(teach["p"] as? String == "select")
        #expect(teach["name"] as? String == "Teach room" && teach["default_entity_id"] as? String == "select.cat_teach_room")
        #expect(teach["entity_category"] as? String == "config", "on the device's page, not on generated dashboards")
        #expect(teach["options"] as? [String] == ["Not teaching", "Living Room", "Kitchen", "Bathroom", "Study"])
        #expect(teach["command_topic"] as? String == "roomcast/aggregator/learn")
        #expect(teach["state_topic"] as? String == "roomcast/aggregator/learn/state")
        let command = try #require(teach["command_template"] as? String)
        #expect(command.contains("'Study': 'office'") && command.contains("'beacon': '\(cat.rawValue)'"))
        #expect(command.contains("'action': 'cancel'") && command.contains("'request': 'home-assistant'"))
        let state = try #require(teach["value_template"] as? String)
        #expect(state.contains("selectattr('beacon', 'eq', '\(cat.rawValue)')") && state.contains("'office': 'Study'"))
        // A person's beacon is taught on the person's device; one beacon: the plain name.
        let alice = try device("roomcast_person_alice_smith", in: all)
        let hers = try component("roomcast_ibeacon_e06f95e4_fcfc_42c6_b4f8_f6bae87ea1a0_1233_46_teach", of: alice)
        #expect(hers["default_entity_id"] as? String == "select.alice_smith_teach_room")
        #expect((hers["command_template"] as? String)?.contains(Self.phone.rawValue) == true)
        // Unique ids stay unique with the selects among them.
        var ids: [String] = []
        for m in all { for (_, c) in try json(m)["cmps"] as? [String: [String: Any]] ?? [:] { ids.append(c["unique_id"] as? String ?? "") } }
        #expect(Set(ids).count == ids.count)
        // Entity mode: a select topic of its own, options kept (a select needs them).
        let old = try discovery(.entity).siteConfigs(Self.site)
        let topic = "homeassistant/select/roomcast_ibeacon_e06f95e4_fcfc_42c6_b4f8_f6bae87ea1a0_1233_45_teach/config"
        let entity = try json(try #require(old.first { $0.topic == topic }))
        #expect(entity["options"] as? [String] == teach["options"] as? [String])
        #expect(entity["command_template"] as? String == command)
        // What came of it: the rooms taught, on the aggregator's device.
        let taught = try component("roomcast_aggregator_rooms_taught", of: try device("roomcast_aggregator", in: all))
        #expect(taught["state_topic"] as? String == "roomcast/aggregator/learn/state")
        #expect(taught["value_template"] as? String == "{{ value_json.rooms | length }}")
        #expect((taught["json_attributes_template"] as? String)?.contains("'office': 'Study'") == true)
        #expect(taught["entity_category"] as? String == "diagnostic")
        // And undoing it: each room's button forgets what was taught there.
        let forget = try component("roomcast_room_office_forget", of: try device("roomcast_room_office", in: all))
        #expect(forget["p"] as? String == "button" && forget["entity_category"] as? String == "config")
        #expect(forget["default_entity_id"] as? String == "button.study_forget_taught_levels")
        #expect(forget["command_topic"] as? String == "roomcast/aggregator/learn" && forget["state_topic"] == nil)
        let press = try #require(forget["payload_press"] as? String)
        #expect(LearnCommand.decode(Array(press.utf8)) == .success(LearnCommand(.forget(room: "office"), request: "home-assistant")))
    }

    @Test func aPersonWithTwoBeaconsGetsASelectForEachAndRoomsOfOneNameAreToldApart() throws {
        let tag = BeaconID("ibeacon:e06f95e4-fcfc-42c6-b4f8-f6bae87ea1a0-1233-47")!
        let site = SiteModel(
            rooms: [.init(name: "bedroom", displayName: "Bedroom"), .init(name: "bedroom2", displayName: "Bedroom")],
            beacons: [.init(id: Self.phone, name: "Phone"), .init(id: tag)],
            people: [.init(name: "Bob", beacons: [Self.phone, tag])])
        let bob = try device("roomcast_person_bob", in: try HomeAssistantDiscovery(topics: Topics(), site: site).siteConfigs(site))
        let phone = try component("roomcast_ibeacon_e06f95e4_fcfc_42c6_b4f8_f6bae87ea1a0_1233_46_teach", of: bob)
        let other = try component("roomcast_ibeacon_e06f95e4_fcfc_42c6_b4f8_f6bae87ea1a0_1233_47_teach", of: bob)
        #expect(phone["name"] as? String == "Teach room with Phone")
        #expect(phone["default_entity_id"] as? String == "select.bob_teach_room_with_phone")
        #expect(other["name"] as? String == "Teach room with \(tag.rawValue)")
        #expect(phone["options"] as? [String] == ["Not teaching", "Bedroom (bedroom)", "Bedroom (bedroom2)"])
        #expect((phone["command_template"] as? String)?.contains("'Bedroom (bedroom2)': 'bedroom2'") == true)
    }

    /// Rooms of one display name (a bathroom on each floor) gave a room sensor one state for
    /// both, and a room shown as `Away` the away state: a trigger on it fired for either. They
    /// are told apart as the teaching selects tell them apart.
    @Test func roomSensorsTellRoomsOfOneDisplayNameApart() throws {
        let site = SiteModel(
            rooms: [.init(name: "bath", displayName: "Bathroom"), .init(name: "bath2", floor: 1, displayName: "Bathroom"),
                    .init(name: "porch", displayName: "Away")],
            nodes: [.init(name: "bath-pi", room: "bath")],
            beacons: [.init(id: Self.phone, name: "Phone")],
            people: [.init(name: "Bob", beacons: [Self.phone])])
        let bob = try device("roomcast_person_bob", in: try HomeAssistantDiscovery(topics: Topics(), site: site).siteConfigs(site))
        let room = try component("roomcast_person_bob_room", of: bob)
        let options = try #require(room["options"] as? [String])
        #expect(options == ["Bathroom (bath)", "Bathroom (bath2)", "Away (porch)", "Away"])
        #expect((room["value_template"] as? String)?.contains("'bath2': 'Bathroom (bath2)'") == true, "\(room["value_template"] ?? "")")
    }

    /// Each select carries the rooms; on a site of hundreds of rooms the display names' tables
    /// would crowd a person's config (the wire contract's payloads are at most 64 KiB): the
    /// options are the room ids then, and beyond that there is no select (`aggregator learn`
    /// teaches).
    @Test func aSiteOfManyRoomsIsOfferedRoomIdsThenNoSelect() throws {
        let tag = BeaconID("ibeacon:e06f95e4-fcfc-42c6-b4f8-f6bae87ea1a0-1233-47")!
        func person(rooms: Int) throws -> (config: OutboundMessage, selects: [[String: Any]]) {
            let site = SiteModel(rooms: (1...rooms).map { .init(name: "room-\($0)", displayName: "Meeting Room \($0)") },
                                 beacons: [.init(id: Self.phone, name: "Phone"), .init(id: tag, name: "Tag")],
                                 people: [.init(name: "Bob", beacons: [Self.phone, tag])])
            let config = try #require(try HomeAssistantDiscovery(topics: Topics(), site: site).personConfigs(site.people[0]).first)
            let cmps = try json(config)["cmps"] as? [String: [String: Any]] ?? [:]
            return (config, cmps.values.filter { $0["p"] as? String == "select" })
        }
        let home = try person(rooms: 40)
        #expect(home.selects.count == 2 && home.selects.allSatisfy { ($0["options"] as? [String])?[1] == "Meeting Room 1" })
        let building = try person(rooms: 300)
        #expect(building.selects.count == 2)
        for select in building.selects {
            #expect((select["options"] as? [String])?.prefix(3) == ["Not teaching", "room-1", "room-2"])
            #expect(select["command_template"] as? String
                    == "{{ ({'room': value, 'beacon': '\(Self.phone.rawValue)', 'request': 'home-assistant'} if value != 'Not teaching' "
                        + "else {'action': 'cancel', 'beacon': '\(Self.phone.rawValue)', 'request': 'home-assistant'}) | tojson }}"
                    || (select["command_template"] as? String)?.contains(tag.rawValue) == true)
        }
        let campus = try person(rooms: 2000)
        #expect(campus.selects.isEmpty)
        #expect(building.config.payload.count < 64 * 1024)
    }

    /// Every room's name is in each beacon's and person's room sensor (its options, and the
    /// template that shows a room by its display name): on a site of hundreds of rooms a config
    /// outgrew what a broker passes (the shipped one refuses packets over 128 KiB and disconnects
    /// the sender). Every config stays within `WireFormat.maxPayloadBytes`, in either mode, whatever
    /// the number of rooms, and the room sensor says each room by display name while that fits.
    @Test(arguments: [40, 600, 5000])
    func everyConfigFitsWhateverTheNumberOfRooms(rooms count: Int) throws {
        let tag = BeaconID("ibeacon:e06f95e4-fcfc-42c6-b4f8-f6bae87ea1a0-1233-47")!
        let rooms = (1...count).map { SiteModel.Room(name: "meeting-room-\($0)-east-wing", displayName: "Meeting Room \($0), East Wing") }
        let site = SiteModel(rooms: rooms, nodes: rooms.map { .init(name: "\($0.name)-pi", room: $0.name) },
                             beacons: [.init(id: Self.phone, name: "Phone"), .init(id: tag, name: "Tag"), .init(id: cat, name: "Cat")],
                             people: [.init(name: "Bob", beacons: [Self.phone, tag])])
        for mode in [AggregatorConfig.Discovery.Mode.device, .entity] {
            let configs = try HomeAssistantDiscovery(topics: Topics(), mode: mode, site: site).siteConfigs(site)
            let largest = configs.max { $0.payload.count < $1.payload.count }
            #expect(configs.allSatisfy { $0.payload.count <= WireFormat.maxPayloadBytes },
                    "\(mode), \(count) rooms: \(largest?.topic ?? "") is \(largest?.payload.count ?? 0) bytes")
        }
        let cat = try device("roomcast_beacon_\(HomeAssistantDiscovery.discoveryID(cat.rawValue))",
                             in: try HomeAssistantDiscovery(topics: Topics(), site: site).siteConfigs(site))
        let room = try #require((cat["cmps"] as? [String: [String: Any]])?.values.first { $0["name"] as? String == "Room" })
        switch count {
        case 40:
            #expect((room["options"] as? [String])?.first == "Meeting Room 1, East Wing")
            #expect((room["value_template"] as? String)?.contains("'meeting-room-1-east-wing': 'Meeting Room 1, East Wing'") == true)
        case 600:
            // By id: the ids as options fit, the map to display names does not.
            #expect((room["options"] as? [String])?.first == "meeting-room-1-east-wing")
            #expect((room["options"] as? [String])?.last == "Away")
            #expect(room["value_template"] as? String == "{{ value_json.room if value_json.room else 'Away' }}")
        default:
            // A plain text sensor showing the id.
            #expect(room["options"] == nil && room["device_class"] == nil)
            #expect(room["value_template"] as? String == "{{ value_json.room if value_json.room else 'Away' }}")
        }
    }

    @Test func noTeachingSelectWhereTaughtRoomsAreNotUsedOrThereAreNoRooms() throws {
        let off = HomeAssistantDiscovery(topics: Topics(), site: Self.site, teaching: false)
        #expect(!off.offersTeaching)
        let roomless = SiteModel(beacons: [.init(id: cat, name: "Cat")])
        for (d, site) in [(off, Self.site), (HomeAssistantDiscovery(topics: Topics(), site: roomless), roomless)] {
            for m in try d.siteConfigs(site) {
                let cmps = try json(m)["cmps"] as? [String: [String: Any]] ?? [:]
                #expect(!cmps.values.contains { $0["p"] as? String == "select" }, "\(m.topic)")
                #expect(cmps["roomcast_aggregator_rooms_taught"] == nil)
                #expect(!cmps.values.contains { $0["p"] as? String == "button" }, "\(m.topic)")
            }
        }
    }

    @Test func nodeDistancesAreOffUnlessAskedFor() throws {
        let plain = try device("roomcast_node_kitchen_pi", in: try discovery().siteConfigs(Self.site))
        #expect(!((plain["cmps"] as? [String: Any])?.keys.contains { $0.contains("distance") } ?? true))
        let with = HomeAssistantDiscovery(topics: Topics(), site: Self.site, nodeDistances: true)
        let node = try device("roomcast_node_kitchen_pi", in: try with.siteConfigs(Self.site))
        let d = try component("roomcast_node_kitchen_pi_distance_ibeacon_e06f95e4_fcfc_42c6_b4f8_f6bae87ea1a0_1233_45", of: node)
        #expect(d["state_topic"] as? String == "roomcast/presence/\(cat.rawValue)")
        #expect(d["unit_of_measurement"] as? String == "m" && d["device_class"] as? String == "distance")
        #expect(d["default_entity_id"] as? String == "sensor.kitchen_pi_cat_distance")
    }

    /// The cat taken out of the config: the kitchen node's device stays, without the cat's
    /// distance sensor. Home Assistant keeps a component left out, so the node's config goes
    /// out once with that component as `{"p": "sensor"}` alone (Home Assistant removes it),
    /// then as wanted, which stays retained. An unchanged device gets nothing extra.
    @Test func aComponentADeviceNoLongerHasIsRemovedExplicitly() throws {
        let before = HomeAssistantDiscovery(topics: Topics(), site: Self.site, nodeDistances: true)
        var smaller = Self.site
        smaller.beacons.removeAll { $0.id == cat }
        let after = HomeAssistantDiscovery(topics: Topics(), site: smaller, nodeDistances: true)
        var onBroker: [String: [String: String]] = [:]
        for m in try before.siteConfigs(Self.site) {
            if let components = before.deviceComponents(topic: m.topic, payload: m.payload) { onBroker[m.topic] = components }
        }
        let node = "homeassistant/device/roomcast_node_kitchen_pi/config"
        let distance = "roomcast_node_kitchen_pi_distance_ibeacon_e06f95e4_fcfc_42c6_b4f8_f6bae87ea1a0_1233_45"
        #expect(onBroker[node]?[distance] == "sensor")
        let wanted = try after.siteConfigs(smaller)
        let removals = after.componentRemovals(onBroker: onBroker, wanted: wanted)
        #expect(Set(removals.map(\.topic)) == [node, "homeassistant/device/roomcast_node_bath_pi/config"])
        let patched = try json(try #require(removals.first { $0.topic == node }))
        #expect((patched["cmps"] as? [String: Any])?[distance] as? [String: String] == ["p": "sensor"])
        #expect(removals.last { $0.topic == node } == wanted.first { $0.topic == node }, "the wanted config goes last, and stays retained")
        #expect(after.componentRemovals(onBroker: onBroker, wanted: try before.siteConfigs(Self.site)).isEmpty)
        // An entity-mode topic, or not a config, is nothing to compare.
        #expect(after.deviceComponents(topic: "homeassistant/sensor/roomcast_x/config", payload: Array("{}".utf8)) == nil)
        #expect(after.deviceComponents(topic: node, payload: Array("not json".utf8)) == nil)
    }

    /// The cat joins Alice and her phone becomes nobody's: each teaching select changes device.
    @Test func anEntityNowOnAnotherDeviceIsLetGoFirst() throws {
        var swapped = Self.site
        swapped.people = [.init(name: "Alice Smith", beacons: [cat])]
        let cat = "roomcast_ibeacon_e06f95e4_fcfc_42c6_b4f8_f6bae87ea1a0_1233_45", phone = "roomcast_ibeacon_e06f95e4_fcfc_42c6_b4f8_f6bae87ea1a0_1233_46"
        // Device mode: the cat's device goes (its select is Alice's now); Alice's lets go of the phone's.
        let before = discovery(), after = HomeAssistantDiscovery(topics: Topics(), site: swapped)
        var components: [String: [String: String]] = [:]
        for m in try before.siteConfigs(Self.site) { components[m.topic] = before.deviceComponents(topic: m.topic, payload: m.payload) }
        let wanted = try after.siteConfigs(swapped)
        let handover = after.handovers(components: components, devices: [:], wanted: wanted)
        let catDevice = "homeassistant/device/roomcast_beacon_\(cat.dropFirst("roomcast_".count))/config"
        let alice = "homeassistant/device/roomcast_person_alice_smith/config"
        #expect(handover.messages.map(\.topic) == [catDevice, alice])
        #expect(handover.messages.first?.payload.isEmpty == true)
        let released = try json(try #require(handover.messages.last))
        #expect((released["cmps"] as? [String: Any])?["\(phone)_teach"] as? [String: String] == ["p": "select"])
        #expect((released["cmps"] as? [String: Any])?["\(cat)_teach"] != nil)
        #expect(handover.components[catDevice] == nil && handover.components[alice]?["\(phone)_teach"] == nil)
        #expect(handover.components[alice]?["roomcast_person_alice_smith"] == "device_tracker")
        // Nothing to hand over when nothing changed owner.
        var own: [String: [String: String]] = [:]
        for m in wanted { own[m.topic] = after.deviceComponents(topic: m.topic, payload: m.payload) }
        #expect(after.handovers(components: own, devices: [:], wanted: wanted).messages.isEmpty)

        // Entity mode: each select's own topic is emptied, then written on its new device.
        let oldEntities = discovery(.entity), newEntities = HomeAssistantDiscovery(topics: Topics(), mode: .entity, site: swapped)
        var devices: [String: String] = [:]
        for m in try oldEntities.siteConfigs(Self.site) { devices[m.topic] = oldEntities.entityDevice(topic: m.topic, payload: m.payload) }
        #expect(devices["homeassistant/select/\(cat)_teach/config"] == "roomcast_beacon_\(cat.dropFirst("roomcast_".count))")
        let entityHandover = newEntities.handovers(components: [:], devices: devices, wanted: try newEntities.siteConfigs(swapped))
        #expect(Set(entityHandover.messages.map(\.topic)) == ["homeassistant/select/\(cat)_teach/config", "homeassistant/select/\(phone)_teach/config"])
        #expect(entityHandover.messages.allSatisfy { $0.payload.isEmpty && $0.retain })
        #expect(newEntities.entityDevice(topic: catDevice, payload: Array("{}".utf8)) == nil)
        var same: [String: String] = [:]
        for m in try newEntities.siteConfigs(swapped) { same[m.topic] = newEntities.entityDevice(topic: m.topic, payload: m.payload) }
        #expect(newEntities.handovers(components: [:], devices: same, wanted: try newEntities.siteConfigs(swapped)).messages.isEmpty)

        // Both at once, device mode back to entity mode: the cat's old device, which no config
        // names now, is emptied before its select comes on Alice's; Alice's device, which her
        // configs name, is migrated with them.
        let switched = newEntities.handovers(components: components, devices: [:], wanted: try newEntities.siteConfigs(swapped))
        #expect(switched.messages.map(\.topic) == [catDevice] && switched.messages[0].payload.isEmpty)
    }

    @Test func entityModeWritesTheSameEntitiesOnePerTopic() throws {
        let old = try discovery(.entity).siteConfigs(Self.site)
        let topics = Set(old.map(\.topic))
        let slug = "roomcast_ibeacon_e06f95e4_fcfc_42c6_b4f8_f6bae87ea1a0_1233_45"
        #expect(topics.isSuperset(of: [
            "homeassistant/device_tracker/\(slug)/config", "homeassistant/sensor/\(slug)_room/config",
            "homeassistant/binary_sensor/roomcast_room_kitchen_occupancy/config", "homeassistant/sensor/roomcast_room_kitchen_count/config",
            "homeassistant/binary_sensor/roomcast_node_kitchen_pi_connectivity/config",
            "homeassistant/binary_sensor/roomcast_aggregator_connectivity/config",
            "homeassistant/device_tracker/roomcast_person_alice_smith/config",
        ]))
        let room = try json(try #require(old.first { $0.topic == "homeassistant/sensor/\(slug)_room/config" }))
        // No `options` before device discovery's releases: a plain sensor.
        #expect(room["options"] == nil && room["device_class"] == nil && room["p"] == nil)
        #expect((room["device"] as? [String: Any])?["name"] as? String == "Cat")
        #expect((room["origin"] as? [String: Any])?["name"] as? String == "Roomcast")
        // The same unique ids as in device mode, so switching modes keeps the entities.
        var deviceIDs: Set<String> = []
        for m in try discovery().siteConfigs(Self.site) {
            for (_, c) in try json(m)["cmps"] as? [String: [String: Any]] ?? [:] { deviceIDs.insert(c["unique_id"] as? String ?? "") }
        }
        #expect(Set(try old.map { try json($0)["unique_id"] as? String ?? "" }) == deviceIDs)
    }

    @Test func perEntityConfigsMigrateThroughHomeAssistantsMigrationPath() throws {
        let d = discovery()
        let configs = try d.siteConfigs(Self.site)
        let legacy = Set(try discovery(.entity).siteConfigs(Self.site).map(\.topic))
        let (out, migrated) = d.migrating(configs, legacy: legacy.union(["homeassistant/sensor/roomcast_gone/config"]))
        #expect(migrated == legacy)
        let migrate = Array(#"{"migrate_discovery":true}"#.utf8)
        // Every old topic: first the migration request, then (after all device configs) emptied.
        for topic in legacy {
            let i = try #require(out.firstIndex { $0.topic == topic && $0.payload == migrate })
            let j = try #require(out.firstIndex { $0.topic == topic && $0.payload.isEmpty })
            let device = try #require(out.firstIndex { $0.topic.hasPrefix("homeassistant/device/") })
            let lastDevice = try #require(out.lastIndex { $0.topic.hasPrefix("homeassistant/device/") })
            #expect(i < device && j > lastDevice, "\(topic)")
        }
        #expect(out.filter { $0.topic.hasPrefix("homeassistant/device/") }.count == configs.count)
        // Nothing to migrate, or entity mode: the configs alone.
        #expect(d.migrating(configs, legacy: []).messages.map(\.topic) == configs.map(\.topic))
        let entity = discovery(.entity)
        let plain = try entity.siteConfigs(Self.site)
        #expect(entity.migrating(plain, legacy: legacy).messages.map(\.topic) == plain.map(\.topic))

        // Back from `device` to `entity` mode: each device topic is migrated before the entities'
        // configs and emptied after them, once.
        let devices = Set(configs.map(\.topic))
        let (back, rolledBack) = entity.migrating(plain, legacy: devices)
        #expect(rolledBack == devices)
        #expect(back.count == plain.count + 2 * devices.count)
        for topic in devices {
            let i = try #require(back.firstIndex { $0.topic == topic && $0.payload == migrate })
            let j = try #require(back.firstIndex { $0.topic == topic && $0.payload.isEmpty })
            #expect(i < devices.count && j >= devices.count + plain.count, "\(topic)")
        }
        #expect(back[devices.count..<(devices.count + plain.count)].map(\.topic) == plain.map(\.topic))
    }

    @Test func removalsClearOnlyOurConfigsNoLongerWanted() throws {
        let d = discovery()
        let all = try d.siteConfigs(Self.site)
        let stale = "homeassistant/device/roomcast_beacon_old/config"
        let removals = d.removals(existing: Set(all.map(\.topic)).union([stale, "homeassistant/sensor/other_thing/config"]), wanted: all)
        #expect(removals.map(\.topic) == [stale])
        #expect(removals[0].payload.isEmpty && removals[0].retain)
        #expect(try d.beaconRemovals(id: cat).map(\.topic) == ["homeassistant/device/roomcast_beacon_ibeacon_e06f95e4_fcfc_42c6_b4f8_f6bae87ea1a0_1233_45/config"])
        // The other mode's configs of a wanted one are left to whoever publishes it to migrate
        // (another partition's beacons are wanted here, but published there).
        let legacy = Set(try discovery(.entity).siteConfigs(Self.site).map(\.topic))
        #expect(d.removals(existing: legacy, wanted: all).isEmpty)
        #expect(d.removals(existing: legacy, wanted: all.filter { !$0.topic.contains("roomcast_beacon_") }).count == 4, "the cat's")
    }

    @Test(arguments: [("living", "Living Room"), ("kitchen", "Kitchen"), ("kids_room", "Kids Room"), ("office-pi", "Office Pi"),
                      ("Bath", "Bathroom"), ("hall", "Hall")])
    func displayNamesFromIDs(id: String, title: String) {
        #expect(DisplayName.title(for: id) == title)
    }

    /// `node_distances` put a distance sensor per listed beacon on every node's config, about
    /// 700 bytes each: from some 95 named beacons the config passed 64 KiB, and on the shipped
    /// broker (128 KiB packets) from some 190 it was refused, every node device with it.
    @Test func nodeDistancesKeepEveryConfigWithinItsSize() throws {
        let beacons = (1...250).map { k in
            SiteModel.KnownBeacon(id: BeaconID("ibeacon:e06f95e4-fcfc-42c6-b4f8-f6bae87ea1a0-7-\(k)")!, name: "Named tag \(k)")
        }
        let site = SiteModel(rooms: [.init(name: "kitchen")], nodes: [.init(name: "kitchen-pi", room: "kitchen")], beacons: beacons)
        let discovery = HomeAssistantDiscovery(topics: Topics(), site: site, nodeDistances: true)
        let configs = try discovery.siteConfigs(site)
        #expect(configs.allSatisfy { $0.payload.count <= WireFormat.maxPayloadBytes },
                "\(configs.map(\.payload.count).max() ?? 0) bytes")
        let node = try device("roomcast_node_kitchen_pi", in: configs)
        let distances = ((node["cmps"] as? [String: Any]) ?? [:]).keys.filter { $0.contains("_distance_") }
        #expect(distances.count >= 60, "\(distances.count) distance sensors")
        // The first listed beacons keep theirs.
        #expect(distances.contains("roomcast_node_kitchen_pi_distance_ibeacon_e06f95e4_fcfc_42c6_b4f8_f6bae87ea1a0_7_1"))
    }

    /// Entity ids kept only ASCII letters: `Küche` gave `binary_sensor.k_che_occupancy`, and
    /// rooms named in Cyrillic all gave `binary_sensor.occupancy`, numbered `_2`, `_3` by Home
    /// Assistant in whatever order it read them. Letters are spelled in ASCII as Home Assistant
    /// spells them; where a name has letters with no ASCII form, Home Assistant builds the id.
    @Test func entityIDsOfNamesBeyondASCII() throws {
        let names = ["kuche": "Küche", "strasse": "Straße", "salle": "Salle à manger", "kok": "Kök", "kitchen_ru": "Кухня",
                     "bedroom_ru": "Спальня"]
        let site = SiteModel(rooms: names.keys.sorted().map { .init(name: $0, displayName: names[$0]) })
        let all = try discovery().siteConfigs(site)
        func occupancy(_ room: String) throws -> [String: Any] {
            try component("roomcast_room_\(room)_occupancy", of: try device("roomcast_room_\(room)", in: all))
        }
        #expect(try occupancy("kuche")["default_entity_id"] as? String == "binary_sensor.kuche_occupancy")
        #expect(try occupancy("kuche")["object_id"] as? String == "kuche_occupancy")
        #expect(try occupancy("strasse")["default_entity_id"] as? String == "binary_sensor.strasse_occupancy")
        #expect(try occupancy("salle")["default_entity_id"] as? String == "binary_sensor.salle_a_manger_occupancy")
        #expect(try occupancy("kok")["default_entity_id"] as? String == "binary_sensor.kok_occupancy")
        for room in ["kitchen_ru", "bedroom_ru"] {
            let entity = try occupancy(room)
            #expect(entity["default_entity_id"] == nil && entity["object_id"] == nil, "\(room): \(entity)")
            #expect(entity["unique_id"] as? String == "roomcast_room_\(room)_occupancy")
        }
    }

    @Test func slugsForEntityIDs() {
        #expect(DisplayName.slug("Kitchen Occupancy") == "kitchen_occupancy")
        #expect(DisplayName.slug("Alice's phone!") == "alice_s_phone")
        #expect(DisplayName.slug("--") == "")
    }
}
