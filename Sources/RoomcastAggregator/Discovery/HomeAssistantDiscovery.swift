import Foundation
import Shared

/// Builds Home Assistant MQTT discovery configs (retained, under a prefix, default
/// `homeassistant`) for Roomcast's people, beacons, rooms and nodes.
///
/// One device per person, per beacon that belongs to no person, per room and per node, all
/// reached via the aggregator's device. In `device` mode each device is one config,
/// `<prefix>/device/<device id>/config`, its entities under `cmps` (Home Assistant 2024.11 and
/// later); in `entity` mode each entity is one config, `<prefix>/<platform>/<component id>/config`,
/// for older releases. Both carry the same entities: unique_ids and component ids are derived from
/// ids only, so they are stable across restarts and modes, and entity names go through
/// `has_entity_name` (a null name is the device's name alone: "Cat"; "Room" on the device "Cat" is
/// "Cat Room"), with `default_entity_id` (and `object_id`, which releases before 2025.10 read) built
/// from those names. An empty retained payload on a config topic removes what it configured.
public struct HomeAssistantDiscovery: Sendable {
    public let prefix: String
    public let topics: Topics
    public let mode: AggregatorConfig.Discovery.Mode
    /// Display names, areas and people.
    public let site: SiteModel
    /// Per node, a distance sensor for each known beacon (`discovery.node_distances`).
    public let nodeDistances: Bool
    /// Per tracked beacon, a select that teaches the room it is in (`aggregator learn`): on
    /// unless the engine leaves taught rooms out (`fusion.learned_rooms: false`).
    public let teaching: Bool
    /// Every room of the site, where `site` is one partition's (`partition:`): a beacon or a
    /// person may be placed by any partition's aggregator, so its room sensor's options, its
    /// room names and its teaching select cover them all, whichever aggregator published last.
    /// Room and node devices stay the partition's.
    public let siteRooms: [SiteModel.Room]
    private let roomsByName: [String: SiteModel.Room]
    /// The rooms as every teaching select offers them by display name, built once: the tables
    /// are the same for every beacon of the site.
    let teachTitles: RoomTitles
    /// The room sensors' states by room.
    let roomTitles: RoomTitles
    /// How room sensors and attributes name rooms, for the whole site.
    let roomNaming: RoomNaming

    /// How beacons' and people's room sensors name a room. By display name while the tables that
    /// takes fit in `roomTableBudget` (an id → name map in two templates, and the names as the
    /// sensor's options); by id while the ids as options fit; beyond that as a plain text sensor
    /// showing the id. Every room is in every such config, and on a site of hundreds of rooms
    /// they would outgrow what a broker passes.
    enum RoomNaming { case titled, ids, plain }

    /// Bytes of room tables a device's config may carry: with the teaching selects'
    /// `teachBudget`, a config stays within `WireFormat.maxPayloadBytes`.
    static let roomTableBudget = 32 * 1024

    /// Bytes of distance sensors (`node_distances`) a node's config may carry: with its device
    /// and its telemetry sensors, a config stays within `WireFormat.maxPayloadBytes`.
    static let distanceBudget = 56 * 1024

    static func roomNaming(_ rooms: [SiteModel.Room]) -> RoomNaming {
        let map = rooms.reduce(0) { $0 + templateString($1.name).utf8.count + templateString($1.title).utf8.count + 8 }
        let titles = rooms.reduce(0) { $0 + $1.title.utf8.count + 3 }
        if 2 * map + titles <= roomTableBudget { return .titled }
        return rooms.reduce(0, { $0 + $1.name.utf8.count + 3 }) <= roomTableBudget ? .ids : .plain
    }

    public init(prefix: String = "homeassistant", topics: Topics, mode: AggregatorConfig.Discovery.Mode = .device,
                site: SiteModel = SiteModel(), nodeDistances: Bool = false, teaching: Bool = true,
                siteRooms: [SiteModel.Room]? = nil) {
        self.prefix = prefix
        self.topics = topics
        self.mode = mode
        self.site = site
        self.nodeDistances = nodeDistances
        self.teaching = teaching
        self.siteRooms = siteRooms ?? site.rooms
        var rooms: [String: SiteModel.Room] = [:]
        for r in self.siteRooms { rooms[r.name] = r }
        self.roomsByName = rooms
        self.teachTitles = RoomTitles(self.siteRooms, reserved: Self.notTeachingOption)
        self.roomTitles = RoomTitles(self.siteRooms, reserved: Self.awayOption)
        self.roomNaming = Self.roomNaming(self.siteRooms)
    }

    // MARK: devices

    /// A beacon's device: its device_tracker (home / not_home), its room sensor and its last-seen
    /// timestamp. For a beacon that belongs to no person.
    func beaconDevice(id: BeaconID, name: String?, kind: String?) -> DeviceConfig {
        let slug = Self.discoveryID(id.rawValue)
        let display = name ?? id.rawValue
        let presence = topics.presence(id)
        let device = Device(identifiers: ["roomcast_beacon_\(slug)"], name: display, manufacturer: "Roomcast",
                            model: kind ?? id.scheme, viaDevice: Self.aggregatorDeviceID)
        return DeviceConfig(id: "roomcast_beacon_\(slug)", device: device, availability: availability, components: [
            tracker(component: "roomcast_\(slug)", uniqueID: "roomcast_\(slug)_tracker", deviceName: display,
                    stateTopic: presence, state: "{{ 'home' if value_json.room else 'not_home' }}",
                    attributes: withRoomTitles { title in
                        "{{ {'room': \(title("value_json.room")), 'room_id': value_json.room, "
                        + "'last_room': \(title("value_json.get('last_room')")), 'last_room_id': value_json.get('last_room'), "
                        + "'floor': value_json.get('floor'), 'distance': value_json.get('distance'), "
                        + "'confidence': value_json.get('confidence'), 'node': value_json.get('node'), "
                        + "'reason': value_json.get('reason'), 'last_seen': \(Self.isoTime("value_json.get('last_seen')")), "
                        + "'in_zones': \(Self.homeZone(when: "value_json.room"))} | tojson }}"
                    }),
            roomSensor(component: "roomcast_\(slug)_room", uniqueID: "roomcast_\(slug)_room", deviceName: display,
                       stateTopic: presence,
                       attributes: Self.attributesTemplate(["confidence", "node", "distance", "runner_up", "reason"])),
            lastSeen(component: "roomcast_\(slug)_last_seen", uniqueID: "roomcast_\(slug)_last_seen", deviceName: display,
                     stateTopic: presence),
        ] + teachSelects([(id, Self.teachName)], deviceName: display))
    }

    /// A person's device: a device_tracker in Home Assistant's presence terms (so a Person linked to
    /// it is home / not_home and the home zone counts them: `homeZone`), a room sensor and a
    /// last-seen timestamp.
    func personDevice(_ person: SiteModel.Person) -> DeviceConfig {
        let slug = Self.discoveryID(person.id)
        let state = topics.person(person.id)
        let device = Device(identifiers: ["roomcast_person_\(slug)"], name: person.name, manufacturer: "Roomcast",
                            model: "person (\(person.beacons.count) beacon\(person.beacons.count == 1 ? "" : "s"))",
                            viaDevice: Self.aggregatorDeviceID)
        return DeviceConfig(id: "roomcast_person_\(slug)", device: device, availability: availability, components: [
            tracker(component: "roomcast_person_\(slug)", uniqueID: "roomcast_person_\(slug)_tracker", deviceName: person.name,
                    stateTopic: state, state: "{{ value_json.state }}",
                    attributes: "{{ {'room': value_json.room_name, 'room_id': value_json.room, "
                        + "'last_room': value_json.get('last_room_name'), 'last_room_id': value_json.get('last_room'), 'floor': value_json.floor, "
                        + "'confidence': value_json.confidence, 'beacon': value_json.beacon, 'reason': value_json.reason, "
                        + "'last_seen': \(Self.isoTime("value_json.last_seen")), "
                        + "'in_zones': \(Self.homeZone(when: "value_json.state == 'home'"))} | tojson }}"),
            roomSensor(component: "roomcast_person_\(slug)_room", uniqueID: "roomcast_person_\(slug)_room",
                       deviceName: person.name, stateTopic: state,
                       attributes: Self.attributesTemplate(["confidence", "beacon", "reason"])),
            lastSeen(component: "roomcast_person_\(slug)_last_seen", uniqueID: "roomcast_person_\(slug)_last_seen",
                     deviceName: person.name, stateTopic: state),
        ] + teachSelects(person.beacons.map { beacon in
            // One select per beacon of theirs: a phone and a tag are taught apart, and the room
            // learned is the site's whichever of them taught it.
            (beacon, person.beacons.count == 1 ? Self.teachName : "\(Self.teachName) with \(beaconName(beacon))")
        }, deviceName: person.name))
    }

    /// A room's device, in the room's Home Assistant area: occupancy (anyone: a person or a beacon
    /// that is nobody's), the count of those, and with people configured the people and the
    /// other beacons separately.
    func roomDevice(_ room: SiteModel.Room) -> DeviceConfig {
        let slug = Self.discoveryID(room.name)
        let title = shownTitle(room)
        let state = topics.room(room.name)
        let device = Device(identifiers: ["roomcast_room_\(slug)"], name: title, manufacturer: "Roomcast",
                            model: "room, floor \(room.floor)", viaDevice: Self.aggregatorDeviceID,
                            suggestedArea: areaName(room))
        var components = [
            component("binary_sensor", "roomcast_room_\(slug)_occupancy", EntityConfig(
                name: "Occupancy", uniqueID: "roomcast_room_\(slug)_occupancy", entityID: entityID("binary_sensor", title, "Occupancy"),
                stateTopic: state, valueTemplate: "{{ 'ON' if value_json.occupied else 'OFF' }}",
                jsonAttributesTopic: state,
                // At most `attributeListLimit` each: Home Assistant's recorder drops attributes over
                // 16 KB (with a warning each time), and a busy room on a site tracking every
                // beacon heard lists hundreds. The count sensors say how many there are.
                jsonAttributesTemplate: "{{ {'people': value_json.get('people', [])[:\(Self.attributeListLimit)], "
                    + "'beacons': value_json.beacons[:\(Self.attributeListLimit)]} | tojson }}",
                deviceClass: "occupancy")),
            component("sensor", "roomcast_room_\(slug)_count", EntityConfig(
                name: "Count", uniqueID: "roomcast_room_\(slug)_count", entityID: entityID("sensor", title, "Count"),
                stateTopic: state, valueTemplate: "{{ value_json.count }}", icon: "mdi:account-multiple", stateClass: "measurement")),
        ]
        if !site.people.isEmpty {
            components.append(component("sensor", "roomcast_room_\(slug)_people", EntityConfig(
                name: "People", uniqueID: "roomcast_room_\(slug)_people", entityID: entityID("sensor", title, "People"),
                stateTopic: state, valueTemplate: "{{ value_json.get('people', []) | length }}", icon: "mdi:account-group",
                stateClass: "measurement")))
            components.append(component("sensor", "roomcast_room_\(slug)_unassigned", EntityConfig(
                name: "Unassigned beacons", uniqueID: "roomcast_room_\(slug)_unassigned",
                entityID: entityID("sensor", title, "Unassigned beacons"),
                stateTopic: state, valueTemplate: "{{ value_json.get('unassigned', value_json.beacons) | length }}",
                icon: "mdi:bluetooth", stateClass: "measurement")))
        }
        if offersTeaching {
            // Undoing a label given in the wrong room: the room's taught levels go, and teaching
            // it again starts afresh. Pressed where nothing is taught, the result says so.
            var forget = EntityConfig(
                name: "Forget taught levels", uniqueID: "roomcast_room_\(slug)_forget",
                entityID: entityID("button", title, "Forget taught levels"), stateTopic: nil, icon: "mdi:school-outline",
                entityCategory: "config")
            forget.commandTopic = topics.aggregatorLearn
            forget.payloadPress = String(decoding: LearnCommand(.forget(room: room.name), request: Self.teachRequest).encoded(),
                                         as: UTF8.self)
            components.append(component("button", "roomcast_room_\(slug)_forget", forget))
        }
        return DeviceConfig(id: "roomcast_room_\(slug)", device: device, availability: availability, components: components)
    }

    /// A node's device, in its room's area: connectivity and its telemetry (advertisements/s,
    /// beacons in view, uptime, last report), and with `node_distances` a distance per known beacon.
    /// The advertisement rate, the uptime and the last report change at every telemetry (a row
    /// a minute each in Home Assistant's recorder, 900 an hour for five nodes, of nothing a user
    /// looks back on): they are registered disabled, for a user who wants them to turn on.
    func nodeDevice(_ node: SiteModel.Node) -> DeviceConfig {
        let slug = Self.discoveryID(node.name)
        let title = node.title
        let telemetry = topics.nodeTelemetry(node.name)
        // The telemetry topic is retained: a node stopped or lost leaves its last rates on it. The
        // rates and the uptime read unavailable while the node says it is offline (its Last Will,
        // a clean stop, a radio that does not listen), not rates it no longer has; connectivity
        // and last seen stay, to say so and since when.
        let whileOnline = availability + [Availability(topic: topics.nodeStatus(node.name), payloadAvailable: "online",
                                                       payloadNotAvailable: "offline")]
        let device = Device(identifiers: ["roomcast_node_\(slug)"], name: title, manufacturer: "Roomcast",
                            model: "edge-agent", viaDevice: Self.aggregatorDeviceID,
                            suggestedArea: node.room.map { room in roomsByName[room].map(areaName) ?? DisplayName.title(for: room) })
        var components = [
            component("binary_sensor", "roomcast_node_\(slug)_connectivity", EntityConfig(
                name: "Connectivity", uniqueID: "roomcast_node_\(slug)_connectivity",
                entityID: entityID("binary_sensor", title, "Connectivity"),
                stateTopic: topics.nodeStatus(node.name), payloadOn: "online", payloadOff: "offline",
                deviceClass: "connectivity", entityCategory: "diagnostic")),
            component("sensor", "roomcast_node_\(slug)_adverts", EntityConfig(
                name: "Advertisements", uniqueID: "roomcast_node_\(slug)_adverts", entityID: entityID("sensor", title, "Advertisements"),
                stateTopic: telemetry, valueTemplate: "{{ value_json.adverts_per_s }}", availability: whileOnline,
                icon: "mdi:bluetooth-audio",
                stateClass: "measurement", entityCategory: "diagnostic", enabledByDefault: false, unit: "adv/s")),
            component("sensor", "roomcast_node_\(slug)_beacons_in_view", EntityConfig(
                name: "Beacons in view", uniqueID: "roomcast_node_\(slug)_beacons_in_view",
                entityID: entityID("sensor", title, "Beacons in view"),
                stateTopic: telemetry, valueTemplate: "{{ value_json.beacons_in_view }}", availability: whileOnline,
                icon: "mdi:bluetooth",
                stateClass: "measurement", entityCategory: "diagnostic")),
            component("sensor", "roomcast_node_\(slug)_uptime", EntityConfig(
                name: "Uptime", uniqueID: "roomcast_node_\(slug)_uptime", entityID: entityID("sensor", title, "Uptime"),
                stateTopic: telemetry, valueTemplate: "{{ value_json.uptime | round(0) }}", availability: whileOnline,
                deviceClass: "duration",
                stateClass: "measurement", entityCategory: "diagnostic", enabledByDefault: false, unit: "s")),
            component("sensor", "roomcast_node_\(slug)_last_seen", EntityConfig(
                name: "Last seen", uniqueID: "roomcast_node_\(slug)_last_seen", entityID: entityID("sensor", title, "Last seen"),
                stateTopic: telemetry, valueTemplate: Self.isoTimeTemplate("value_json.ts"), deviceClass: "timestamp",
                entityCategory: "diagnostic", enabledByDefault: false)),
        ]
        if nodeDistances {
            var bytes = 0
            for b in site.beacons {
                let bslug = Self.discoveryID(b.id.rawValue)
                let label = "\(b.name ?? b.id.rawValue) distance"
                // The node's own evidence in the beacon's presence; None (unknown) when it has none.
                let pick = "{% set e = value_json.evidence | selectattr('node', 'eq', '\(Self.templateString(node.name))') | list %}"
                    + "{{ (e[0].distance | round(2)) if e and e[0].distance is not none else 'None' }}"
                let sensor = component("sensor", "roomcast_node_\(slug)_distance_\(bslug)", EntityConfig(
                    name: label, uniqueID: "roomcast_node_\(slug)_distance_\(bslug)", entityID: entityID("sensor", title, label),
                    stateTopic: topics.presence(b.id), valueTemplate: pick, deviceClass: "distance", stateClass: "measurement",
                    unit: "m"))
                // Each is about 700 bytes: past the budget (some 70 beacons) the rest are left
                // out, and the config stays one a broker passes.
                bytes += ((try? WireFormat.encode(sensor.config))?.count ?? 0) + sensor.id.utf8.count + 8
                guard bytes <= Self.distanceBudget else { break }
                components.append(sensor)
            }
        }
        return DeviceConfig(id: "roomcast_node_\(slug)", device: device, availability: availability, components: components)
    }

    /// The aggregator's own device (the parent every other device is reached via), with a
    /// connectivity binary_sensor on its status topic and no availability of its own; where
    /// teaching is offered, how many rooms are taught (each room's taught seconds as attributes, by
    /// display name), so a user who taught from Home Assistant sees what came of it.
    func aggregatorDevice() -> DeviceConfig {
        let device = Device(identifiers: [Self.aggregatorDeviceID], name: "Roomcast aggregator", manufacturer: "Roomcast",
                            model: "aggregator \(RoomcastVersion.current)", viaDevice: nil)
        var components = [
            component("binary_sensor", "roomcast_aggregator_connectivity", EntityConfig(
                name: "Connectivity", uniqueID: "roomcast_aggregator_connectivity",
                entityID: "binary_sensor.roomcast_aggregator_connectivity",
                stateTopic: topics.aggregatorStatus, payloadOn: "online", payloadOff: "offline",
                deviceClass: "connectivity", entityCategory: "diagnostic")),
        ]
        if offersTeaching {
            components.append(component("sensor", "roomcast_aggregator_rooms_taught", EntityConfig(
                name: "Rooms taught", uniqueID: "roomcast_aggregator_rooms_taught",
                entityID: "sensor.roomcast_aggregator_rooms_taught",
                stateTopic: topics.aggregatorLearnState, valueTemplate: "{{ value_json.rooms | length }}",
                jsonAttributesTopic: topics.aggregatorLearnState,
                jsonAttributesTemplate: "{% set ns = namespace(taught={}) %}{% for r in value_json.rooms %}"
                    + "{% set ns.taught = dict(ns.taught, **{\(roomTitle("r.name")): r.seconds}) %}{% endfor %}{{ ns.taught | tojson }}",
                availability: availability, icon: "mdi:school", stateClass: "measurement", entityCategory: "diagnostic")))
        }
        return DeviceConfig(id: Self.aggregatorDeviceID, device: device, availability: [], components: components)
    }

    // MARK: messages

    /// Discovery configs for one beacon that belongs to no person.
    public func beaconConfigs(id: BeaconID, name: String?, kind: String? = nil) throws -> [OutboundMessage] {
        try messages(beaconDevice(id: id, name: name, kind: kind))
    }

    /// Discovery configs for one person.
    public func personConfigs(_ person: SiteModel.Person) throws -> [OutboundMessage] { try messages(personDevice(person)) }

    /// Every device of a site: the aggregator, people, the known beacons that are nobody's, rooms, nodes.
    func siteDevices(_ site: SiteModel) -> [DeviceConfig] {
        let owned = site.personOfBeacon
        var out = [aggregatorDevice()]
        out += site.people.map(personDevice)
        out += site.beacons.filter { owned[$0.id] == nil }.map { beaconDevice(id: $0.id, name: $0.name, kind: nil) }
        out += site.rooms.map(roomDevice)
        out += site.nodes.map(nodeDevice)
        return out
    }

    /// The devices of a node fusion made a room of, on a site that lists no nodes (`auto_nodes`):
    /// the node's, and its room's unless the site lists a room of that name.
    func madeNodeDevices(_ node: String) -> [DeviceConfig] {
        let nodeDevice = nodeDevice(SiteModel.Node(name: node, room: node))
        return roomsByName[node] == nil ? [roomDevice(SiteModel.Room(name: node)), nodeDevice] : [nodeDevice]
    }

    /// The configs of `madeNodeDevices`.
    public func madeNodeConfigs(_ node: String) throws -> [OutboundMessage] {
        try madeNodeDevices(node).flatMap(messages)
    }

    /// Every config for a site.
    public func siteConfigs(_ site: SiteModel) throws -> [OutboundMessage] {
        try siteDevices(site).flatMap(messages)
    }

    /// Where Home Assistant says it has started (its birth message, `online`): its default,
    /// whatever the discovery prefix.
    public static let birthTopic = "homeassistant/status"

    /// The subscription that reads back retained discovery configs (both modes' topics).
    public static func configFilter(prefix: String) -> String { "\(prefix)/+/+/config" }

    /// The site's aggregator status topic as it appears in every config's JSON.
    private var statusTopicInJSON: [UInt8] { Array("\"\(topics.aggregatorStatus)\"".utf8) }

    /// True for a config on the broker that this site published: each of its configs names the
    /// site's aggregator status topic (their availability). Another site on the broker, under
    /// another `mqtt.topic_prefix`, uses the same `roomcast_` object ids: its configs are not
    /// this site's to clear.
    public func isThisSites(_ payload: [UInt8]) -> Bool {
        payload.firstRange(of: statusTopicInJSON) != nil
    }

    /// True for a config topic this aggregator owns.
    public func isOurs(_ topic: String) -> Bool {
        // Every inbound message passes here: the suffix test turns readings away without splitting.
        guard topic.hasSuffix("/config") else { return false }
        let levels = topic.split(separator: "/", omittingEmptySubsequences: false)
        return topic.hasPrefix(prefix + "/") && levels.count >= 3 && levels[levels.count - 2].hasPrefix("roomcast_")
            && levels.last == "config"
    }

    /// Ids listed at most in a room's occupancy attributes (people, beacons).
    static var attributeListLimit: Int { 100 }

    /// The messages of one device in the configured mode.
    func messages(_ d: DeviceConfig) throws -> [OutboundMessage] {
        switch mode {
        case .device:
            var cmps: [String: EntityConfig] = [:]
            for c in d.components {
                var e = c.config
                e.platform = c.platform
                cmps[c.id] = e
            }
            let payload = DevicePayload(device: d.device, origin: Self.origin, availability: d.availability.isEmpty ? nil : d.availability,
                                        components: cmps)
            return [try OutboundMessage(topic: "\(prefix)/device/\(d.id)/config", json: payload, retain: true, qos: 1)]
        case .entity:
            return try d.components.map { c in
                var e = c.config
                e.device = d.device
                e.origin = Self.origin
                if e.availability == nil, !d.availability.isEmpty { e.availability = d.availability }
                // Releases before device discovery have no `options`, and an enum without them fails.
                if e.deviceClass == "enum" { e.deviceClass = nil; e.options = nil }
                return try OutboundMessage(topic: entityTopic(c), json: e, retain: true, qos: 1)
            }
        }
    }

    private func entityTopic(_ c: Component) -> String { "\(prefix)/\(c.platform)/\(c.id)/config" }

    // MARK: entity builders

    private func tracker(component id: String, uniqueID: String, deviceName: String, stateTopic: String,
                         state: String, attributes: String) -> Component {
        // The template always yields payload_home or payload_not_home: HA's MQTT device_tracker takes
        // any other result's raw payload (the whole JSON) as its state.
        component("device_tracker", id, EntityConfig(
            name: nil, uniqueID: uniqueID, entityID: entitySlug(deviceName).map { "device_tracker.\($0)" },
            stateTopic: stateTopic, valueTemplate: state, jsonAttributesTopic: stateTopic, jsonAttributesTemplate: attributes,
            sourceType: "bluetooth_le", payloadHome: "home", payloadNotHome: PersonPresence.State.notHome.rawValue,
            availability: heldAvailability(stateTopic), icon: "mdi:bluetooth"))
    }

    private func roomSensor(component id: String, uniqueID: String, deviceName: String, stateTopic: String,
                            attributes: String) -> Component {
        component("sensor", id, EntityConfig(
            name: "Room", uniqueID: uniqueID, entityID: entityID("sensor", deviceName, "Room"),
            stateTopic: stateTopic,
            valueTemplate: "{{ \(roomTitle("value_json.room")) if value_json.room else '\(Self.awayOption)' }}",
            jsonAttributesTopic: stateTopic, jsonAttributesTemplate: attributes,
            availability: heldAvailability(stateTopic), deviceClass: roomOptions.isEmpty ? nil : "enum",
            icon: "mdi:map-marker", options: roomOptions.isEmpty ? nil : roomOptions))
    }

    private func lastSeen(component id: String, uniqueID: String, deviceName: String, stateTopic: String) -> Component {
        component("sensor", id, EntityConfig(
            name: "Last seen", uniqueID: uniqueID, entityID: entityID("sensor", deviceName, "Last seen"),
            stateTopic: stateTopic, valueTemplate: Self.isoTimeTemplate("value_json.get('last_seen')"),
            deviceClass: "timestamp", entityCategory: "diagnostic"))
    }

    /// A beacon's display name: its configured name, else its id.
    private func beaconName(_ id: BeaconID) -> String {
        site.beacons.first { $0.id == id }?.name ?? id.rawValue
    }

    /// The room sensor's state while away.
    public static let awayOption = "Away"

    /// The room sensor's options: every room's display name, and `Away`. None (a plain text
    /// sensor) where rooms can appear that the config does not list: a site that lists no nodes
    /// makes a room of each node it hears, and Home Assistant refuses an enum's state outside
    /// its options.
    var roomOptions: [String] {
        guard !siteRooms.isEmpty, !site.nodes.isEmpty else { return [] }
        switch roomNaming {
        case .titled: return roomTitles.options + [Self.awayOption]
        // An id that is the away option itself could not be told from it: a plain sensor then.
        case .ids: return siteRooms.contains { $0.name == Self.awayOption } ? [] : siteRooms.map(\.name) + [Self.awayOption]
        case .plain: return []
        }
    }

    /// A room's name as Home Assistant shows it: its title, with its id beside it when another
    /// room has that title too (a bathroom on each floor), so that each is its own device and
    /// area, with entity ids of its own, as each is its own option of the room sensors.
    func shownTitle(_ room: SiteModel.Room) -> String { roomTitles.shown[room.name] ?? room.title }

    /// The Home Assistant area a room's devices and its nodes join: `area`, else its shown title.
    func areaName(_ room: SiteModel.Room) -> String { room.area ?? shownTitle(room) }

    /// A template expression for the display name of the room id in `expression` (`roomTitles`).
    private func roomTitle(_ expression: String) -> String {
        guard !siteRooms.isEmpty, roomNaming == .titled else { return expression }
        return "{\(roomTitles.byRoom)}.get(\(expression), \(expression))"
    }

    /// The template `body` builds with room ids shown by their display names (`roomTitle`), the
    /// id → name map set once however many ids it shows.
    private func withRoomTitles(_ body: (_ title: (String) -> String) -> String) -> String {
        guard !siteRooms.isEmpty, roomNaming == .titled else { return body { $0 } }
        return "{% set titles = {\(roomTitles.byRoom)} %}" + body { "titles.get(\($0), \($0))" }
    }

    /// The aggregator's status, and the presence held without evidence (the nodes that heard it
    /// are offline): unavailable rather than a room nobody can vouch for, and never not_home.
    private func heldAvailability(_ stateTopic: String) -> [Availability] {
        availability + [Availability(topic: stateTopic, payloadAvailable: "online", payloadNotAvailable: "offline",
                                     valueTemplate: "{{ 'offline' if value_json.get('reason') == '\(Self.heldReason)' else 'online' }}")]
    }

    /// The presence reason while a beacon is held without evidence.
    public static let heldReason = "nodes_offline"

    func component(_ platform: String, _ id: String, _ config: EntityConfig) -> Component {
        Component(platform: platform, id: id, config: config)
    }

    static let aggregatorDeviceID = "roomcast_aggregator"

    static var origin: Origin {
        Origin(name: "Roomcast", swVersion: RoomcastVersion.current, supportURL: nil)
    }

    private var availability: [Availability] {
        [Availability(topic: topics.aggregatorStatus, payloadAvailable: "online", payloadNotAvailable: "offline")]
    }
}
