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
    private let teachTitles: TeachTitles

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
        self.teachTitles = TeachTitles(self.siteRooms)
    }

    // MARK: devices

    /// A beacon's device: its device_tracker (home / not_home), its room sensor and its last-seen
    /// timestamp. For a beacon that belongs to no person.
    func beaconDevice(id: BeaconID, name: String?, kind: String?) -> DeviceConfig {
        let slug = Self.slug(id.rawValue)
        let display = name ?? id.rawValue
        let presence = topics.presence(id)
        let device = Device(identifiers: ["roomcast_beacon_\(slug)"], name: display, manufacturer: "Roomcast",
                            model: kind ?? id.scheme, viaDevice: Self.aggregatorDeviceID)
        return DeviceConfig(id: "roomcast_beacon_\(slug)", device: device, availability: availability, components: [
            tracker(component: "roomcast_\(slug)", uniqueID: "roomcast_\(slug)_tracker", deviceName: display,
                    stateTopic: presence, state: "{{ 'home' if value_json.room else 'not_home' }}",
                    attributes: "{{ {'room': \(roomTitle("value_json.room")), 'room_id': value_json.room, "
                        + "'floor': value_json.get('floor'), 'distance': value_json.get('distance'), "
                        + "'confidence': value_json.get('confidence'), 'node': value_json.get('node'), "
                        + "'reason': value_json.get('reason'), 'last_seen': \(Self.isoTime("value_json.get('last_seen')"))} | tojson }}"),
            roomSensor(component: "roomcast_\(slug)_room", uniqueID: "roomcast_\(slug)_room", deviceName: display,
                       stateTopic: presence,
                       attributes: Self.attributesTemplate(["confidence", "node", "distance", "runner_up", "reason"])),
            lastSeen(component: "roomcast_\(slug)_last_seen", uniqueID: "roomcast_\(slug)_last_seen", deviceName: display,
                     stateTopic: presence),
        ] + teachSelects([(id, Self.teachName)], deviceName: display))
    }

    /// A person's device: a device_tracker in Home Assistant's presence terms (so a Person linked to
    /// it is home / not_home and zones count them), a room sensor and a last-seen timestamp.
    func personDevice(_ person: SiteModel.Person) -> DeviceConfig {
        let slug = Self.slug(person.id)
        let state = topics.person(person.id)
        let device = Device(identifiers: ["roomcast_person_\(slug)"], name: person.name, manufacturer: "Roomcast",
                            model: "person (\(person.beacons.count) beacon\(person.beacons.count == 1 ? "" : "s"))",
                            viaDevice: Self.aggregatorDeviceID)
        return DeviceConfig(id: "roomcast_person_\(slug)", device: device, availability: availability, components: [
            tracker(component: "roomcast_person_\(slug)", uniqueID: "roomcast_person_\(slug)_tracker", deviceName: person.name,
                    stateTopic: state, state: "{{ value_json.state }}",
                    attributes: "{{ {'room': value_json.room_name, 'room_id': value_json.room, 'floor': value_json.floor, "
                        + "'confidence': value_json.confidence, 'beacon': value_json.beacon, 'reason': value_json.reason, "
                        + "'last_seen': \(Self.isoTime("value_json.last_seen"))} | tojson }}"),
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
        let slug = Self.slug(room.name)
        let title = room.title
        let state = topics.room(room.name)
        let device = Device(identifiers: ["roomcast_room_\(slug)"], name: title, manufacturer: "Roomcast",
                            model: "room, floor \(room.floor)", viaDevice: Self.aggregatorDeviceID,
                            suggestedArea: room.areaName)
        var components = [
            component("binary_sensor", "roomcast_room_\(slug)_occupancy", EntityConfig(
                name: "Occupancy", uniqueID: "roomcast_room_\(slug)_occupancy", entityID: entityID("binary_sensor", title, "Occupancy"),
                stateTopic: state, valueTemplate: "{{ 'ON' if value_json.occupied else 'OFF' }}",
                jsonAttributesTopic: state,
                jsonAttributesTemplate: "{{ {'people': value_json.get('people', []), 'beacons': value_json.beacons} | tojson }}",
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
    func nodeDevice(_ node: SiteModel.Node) -> DeviceConfig {
        let slug = Self.slug(node.name)
        let title = node.title
        let telemetry = topics.nodeTelemetry(node.name)
        let device = Device(identifiers: ["roomcast_node_\(slug)"], name: title, manufacturer: "Roomcast",
                            model: "edge-agent", viaDevice: Self.aggregatorDeviceID,
                            suggestedArea: node.room.map { roomsByName[$0]?.areaName ?? DisplayName.title(for: $0) })
        var components = [
            component("binary_sensor", "roomcast_node_\(slug)_connectivity", EntityConfig(
                name: "Connectivity", uniqueID: "roomcast_node_\(slug)_connectivity",
                entityID: entityID("binary_sensor", title, "Connectivity"),
                stateTopic: topics.nodeStatus(node.name), payloadOn: "online", payloadOff: "offline",
                deviceClass: "connectivity", entityCategory: "diagnostic")),
            component("sensor", "roomcast_node_\(slug)_adverts", EntityConfig(
                name: "Advertisements", uniqueID: "roomcast_node_\(slug)_adverts", entityID: entityID("sensor", title, "Advertisements"),
                stateTopic: telemetry, valueTemplate: "{{ value_json.adverts_per_s }}", icon: "mdi:bluetooth-audio",
                stateClass: "measurement", entityCategory: "diagnostic", unit: "adv/s")),
            component("sensor", "roomcast_node_\(slug)_beacons_in_view", EntityConfig(
                name: "Beacons in view", uniqueID: "roomcast_node_\(slug)_beacons_in_view",
                entityID: entityID("sensor", title, "Beacons in view"),
                stateTopic: telemetry, valueTemplate: "{{ value_json.beacons_in_view }}", icon: "mdi:bluetooth",
                stateClass: "measurement", entityCategory: "diagnostic")),
            component("sensor", "roomcast_node_\(slug)_uptime", EntityConfig(
                name: "Uptime", uniqueID: "roomcast_node_\(slug)_uptime", entityID: entityID("sensor", title, "Uptime"),
                stateTopic: telemetry, valueTemplate: "{{ value_json.uptime | round(0) }}", deviceClass: "duration",
                stateClass: "measurement", entityCategory: "diagnostic", unit: "s")),
            component("sensor", "roomcast_node_\(slug)_last_seen", EntityConfig(
                name: "Last seen", uniqueID: "roomcast_node_\(slug)_last_seen", entityID: entityID("sensor", title, "Last seen"),
                stateTopic: telemetry, valueTemplate: Self.isoTimeTemplate("value_json.ts"), deviceClass: "timestamp",
                entityCategory: "diagnostic")),
        ]
        if nodeDistances {
            for b in site.beacons {
                let bslug = Self.slug(b.id.rawValue)
                let label = "\(b.name ?? b.id.rawValue) distance"
                // The node's own evidence in the beacon's presence; None (unknown) when it has none.
                let pick = "{% set e = value_json.evidence | selectattr('node', 'eq', '\(Self.templateString(node.name))') | list %}"
                    + "{{ (e[0].distance | round(2)) if e and e[0].distance is not none else 'None' }}"
                components.append(component("sensor", "roomcast_node_\(slug)_distance_\(bslug)", EntityConfig(
                    name: label, uniqueID: "roomcast_node_\(slug)_distance_\(bslug)", entityID: entityID("sensor", title, label),
                    stateTopic: topics.presence(b.id), valueTemplate: pick, deviceClass: "distance", stateClass: "measurement",
                    unit: "m")))
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

    /// Discovery configs for one room.
    public func roomConfigs(_ room: SiteModel.Room) throws -> [OutboundMessage] { try messages(roomDevice(room)) }

    /// Discovery configs for one node.
    public func nodeConfigs(_ node: SiteModel.Node) throws -> [OutboundMessage] { try messages(nodeDevice(node)) }

    /// Discovery configs for the aggregator's device.
    public func aggregatorConfigs() throws -> [OutboundMessage] { try messages(aggregatorDevice()) }

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

    /// Every config for a site.
    public func siteConfigs(_ site: SiteModel) throws -> [OutboundMessage] {
        try siteDevices(site).flatMap(messages)
    }

    /// Empty retained configs that remove one beacon's entities.
    public func beaconRemovals(id: BeaconID) throws -> [OutboundMessage] {
        try beaconConfigs(id: id, name: nil).map { OutboundMessage(topic: $0.topic, payload: [], retain: true, qos: 1) }
    }

    /// Empty retained payloads for Roomcast configs on the broker that are no longer wanted
    /// (a beacon removed from the config, a person's beacon that now belongs to them, the other
    /// mode's topics).
    public func removals(existing: Set<String>, wanted: [OutboundMessage]) -> [OutboundMessage] {
        let keep = Set(wanted.map(\.topic))
        return existing.subtracting(keep).filter(isOurs).sorted().map { OutboundMessage(topic: $0, payload: [], retain: true, qos: 1) }
    }

    /// `configs` (device mode) with Home Assistant's migration from per-entity configs around them:
    /// for every component whose per-entity config is in `legacy` (read back from the broker), first
    /// `{"migrate_discovery": true}` on that topic (HA unloads the entity but keeps its registry entry,
    /// its entity id and history), then the device config (HA adopts the entity by its unique_id), then
    /// an empty retained payload there (nothing left to remove, so nothing is). Returns the topics used.
    public func migrating(_ configs: [OutboundMessage], legacy: Set<String>) -> (messages: [OutboundMessage], migrated: Set<String>) {
        guard mode == .device, !legacy.isEmpty else { return (configs, []) }
        var before: [OutboundMessage] = [], after: [OutboundMessage] = []
        var migrated: Set<String> = []
        for config in configs {
            guard let id = deviceID(ofTopic: config.topic), let device = legacyTopics[id] else { continue }
            for topic in device where legacy.contains(topic) {
                migrated.insert(topic)
                before.append(OutboundMessage(topic: topic, text: #"{"migrate_discovery":true}"#, retain: true, qos: 1))
                after.append(OutboundMessage(topic: topic, payload: [], retain: true, qos: 1))
            }
        }
        return (before + configs + after, migrated)
    }

    /// Per device id, the per-entity topics its components had in `entity` mode (site devices only).
    private var legacyTopics: [String: [String]] {
        var out: [String: [String]] = [:]
        for d in siteDevices(site) { out[d.id] = d.components.map { entityTopic($0) } }
        return out
    }

    /// The device id of a device-mode config topic.
    private func deviceID(ofTopic topic: String) -> String? {
        let head = "\(prefix)/device/"
        guard topic.hasPrefix(head), topic.hasSuffix("/config") else { return nil }
        return String(topic.dropFirst(head.count).dropLast("/config".count))
    }

    /// The subscription that reads back retained discovery configs (both modes' topics).
    public var configFilter: String { "\(prefix)/+/+/config" }

    /// True for a config topic this aggregator owns.
    public func isOurs(_ topic: String) -> Bool {
        // Every inbound message passes here: the suffix test turns readings away without splitting.
        guard topic.hasSuffix("/config") else { return false }
        let levels = topic.split(separator: "/", omittingEmptySubsequences: false)
        return topic.hasPrefix(prefix + "/") && levels.count >= 3 && levels[levels.count - 2].hasPrefix("roomcast_")
            && levels.last == "config"
    }

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
            name: nil, uniqueID: uniqueID, entityID: "device_tracker.\(entitySlug(deviceName))",
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

    /// The teaching select's name, and its option while no label runs for its beacon.
    static let teachName = "Teach room"
    public static let notTeachingOption = "Not teaching"
    /// What a learn command from Home Assistant carries back in its results (`request`).
    public static let teachRequest = "home-assistant"

    /// What a device's teaching selects may add to its config: each carries the site's rooms
    /// (twice, by display name, about 65 bytes a room), and a discovery payload holds at most
    /// `WireFormat.maxPayloadBytes`.
    static let teachBudget = 16 * 1024

    /// A device's teaching selects, one per (beacon, entity name): their options the rooms'
    /// display names while they fit in `teachBudget`, else the rooms' ids (no table to carry),
    /// else none: a site of so many rooms teaches with `aggregator learn`.
    private func teachSelects(_ beacons: [(id: BeaconID, name: String)], deviceName: String) -> [Component] {
        guard offersTeaching else { return [] }
        for titled in [true, false] {
            let selects = beacons.map { teachSelect(beacon: $0.id, deviceName: deviceName, entityName: $0.name, titled: titled) }
            let bytes = selects.reduce(0) { sum, c in
                sum + (c.config.commandTemplate?.utf8.count ?? 0) + (c.config.valueTemplate?.utf8.count ?? 0)
                    + (c.config.options ?? []).reduce(0) { $0 + $1.utf8.count + 3 }
            }
            if bytes <= Self.teachBudget { return selects }
        }
        return []
    }

    /// Teaching a room from Home Assistant (docs/mqtt-api.md, Teaching rooms): a select whose
    /// options are the rooms and `Not teaching`. Picking a room sends the learn command for
    /// `beacon` in that room (the default 30 s); picking `Not teaching` cancels its label. Its
    /// state is the label running for the beacon, from the retained learn state. A config entity:
    /// it sits on the device's page, not on the dashboards HA generates. `titled`: the options are
    /// the rooms' display names, which the templates map to and from the ids; else the ids.
    private func teachSelect(beacon: BeaconID, deviceName: String, entityName: String, titled: Bool) -> Component {
        let slug = Self.slug(beacon.rawValue)
        let id = Self.templateString(beacon.rawValue), request = Self.templateString(Self.teachRequest)
        let notTeaching = Self.templateString(Self.notTeachingOption)
        let learn = "{'room': ROOM, 'beacon': '\(id)', 'request': '\(request)'}"
        let cancel = "{'action': 'cancel', 'beacon': '\(id)', 'request': '\(request)'}"
        let running = "{% set a = value_json.active | selectattr('beacon', 'eq', '\(id)') | list %}"
        let command: String, state: String, options: [String]
        if titled {
            command = "{% set rooms = {\(teachTitles.byOption)} %}"
                + "{{ (\(learn.replacingOccurrences(of: "ROOM", with: "rooms[value]")) if value in rooms else \(cancel)) | tojson }}"
            state = running + "{{ {\(teachTitles.byRoom)}.get(a[0].room, '\(notTeaching)') if a else '\(notTeaching)' }}"
            options = teachTitles.options
        } else {
            // A room whose id is the cancelling option itself cannot be told from it: not offered.
            command = "{{ (\(learn.replacingOccurrences(of: "ROOM", with: "value")) if value != '\(notTeaching)' else \(cancel)) | tojson }}"
            state = running + "{{ a[0].room if a else '\(notTeaching)' }}"
            options = siteRooms.map(\.name).filter { $0 != Self.notTeachingOption }
        }
        var config = EntityConfig(
            name: entityName, uniqueID: "roomcast_\(slug)_teach", entityID: entityID("select", deviceName, entityName),
            stateTopic: topics.aggregatorLearnState, valueTemplate: state, icon: "mdi:school",
            entityCategory: "config", options: [Self.notTeachingOption] + options)
        config.commandTopic = topics.aggregatorLearn
        config.commandTemplate = command
        return component("select", "roomcast_\(slug)_teach", config)
    }

    /// True when tracked beacons get a teaching select: teaching is on and there are rooms to pick.
    public var offersTeaching: Bool { teaching && !siteRooms.isEmpty }

    /// Each room's option in a teaching select, its display name (with its id beside it where
    /// two rooms share one), and the template tables from option to room id and back.
    struct TeachTitles: Sendable {
        var options: [String]
        var byOption: String
        var byRoom: String

        init(_ rooms: [SiteModel.Room]) {
            var seen: [String: Int] = [:]
            for r in rooms { seen[r.title, default: 0] += 1 }
            let pairs = rooms.map { r in
                (room: r.name, option: seen[r.title, default: 0] > 1 || r.title == HomeAssistantDiscovery.notTeachingOption
                    ? "\(r.title) (\(r.name))" : r.title)
            }
            options = pairs.map(\.option)
            byOption = pairs.map { "'\(HomeAssistantDiscovery.templateString($0.option))': '\(HomeAssistantDiscovery.templateString($0.room))'" }
                .joined(separator: ", ")
            byRoom = pairs.map { "'\(HomeAssistantDiscovery.templateString($0.room))': '\(HomeAssistantDiscovery.templateString($0.option))'" }
                .joined(separator: ", ")
        }
    }

    /// A beacon's display name: its configured name, else its id.
    private func beaconName(_ id: BeaconID) -> String {
        site.beacons.first { $0.id == id }?.name ?? id.rawValue
    }

    /// The room sensor's state while away.
    public static let awayOption = "Away"

    /// The room sensor's options: every room's display name, and `Away`.
    var roomOptions: [String] {
        siteRooms.isEmpty ? [] : siteRooms.map(\.title) + [Self.awayOption]
    }

    /// A template expression for the display name of the room id in `expression`.
    private func roomTitle(_ expression: String) -> String {
        guard !siteRooms.isEmpty else { return expression }
        let pairs = siteRooms.map { "'\(Self.templateString($0.name))': '\(Self.templateString($0.title))'" }
        return "{\(pairs.joined(separator: ", "))}.get(\(expression), \(expression))"
    }

    /// The aggregator's status, and the presence held without evidence (the nodes that heard it
    /// are offline): unavailable rather than a room nobody can vouch for, and never not_home.
    private func heldAvailability(_ stateTopic: String) -> [Availability] {
        availability + [Availability(topic: stateTopic, payloadAvailable: "online", payloadNotAvailable: "offline",
                                     valueTemplate: "{{ 'offline' if value_json.get('reason') == '\(Self.heldReason)' else 'online' }}")]
    }

    /// The presence reason while a beacon is held without evidence.
    public static let heldReason = "nodes_offline"

    private func component(_ platform: String, _ id: String, _ config: EntityConfig) -> Component {
        Component(platform: platform, id: id, config: config)
    }

    /// `<platform>.<slug of device name and entity name>`: what HA would build from the names, fixed.
    private func entityID(_ platform: String, _ deviceName: String, _ entityName: String) -> String {
        "\(platform).\(entitySlug(deviceName + " " + entityName))"
    }

    private func entitySlug(_ name: String) -> String {
        let s = DisplayName.slug(name)
        return s.isEmpty ? "roomcast" : s
    }

    static let aggregatorDeviceID = "roomcast_aggregator"

    static var origin: Origin {
        Origin(name: "Roomcast", swVersion: RoomcastVersion.current, supportURL: nil)
    }

    /// A json_attributes_template picking `keys` from a presence payload. `.get` because optional
    /// keys (`runner_up`, ...) are left out of the payload: HA 2024.3.3 fails to render
    /// `value_json.runner_up` then ("LoggingUndefined is not JSON serializable") and logs an error.
    static func attributesTemplate(_ keys: [String]) -> String {
        "{{ {" + keys.map { "'\($0)': value_json.get('\($0)')" }.joined(separator: ", ") + "} | tojson }}"
    }

    /// A template expression: epoch seconds in `expression` as ISO 8601 UTC, or none.
    static func isoTime(_ expression: String) -> String {
        "((\(expression)) | timestamp_custom('%Y-%m-%dT%H:%M:%S+00:00', false)) if (\(expression)) else none"
    }

    /// A value template for a timestamp sensor (`None` is HA's word for no value).
    static func isoTimeTemplate(_ expression: String) -> String {
        "{{ ((\(expression)) | timestamp_custom('%Y-%m-%dT%H:%M:%S+00:00', false)) if (\(expression)) else 'None' }}"
    }

    /// `text` inside a single-quoted Jinja string.
    static func templateString(_ text: String) -> String {
        text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "'", with: "\\'")
    }

    /// A discovery-safe id for unique_ids and component ids: [a-z0-9_] (kept as it always was, so
    /// ids do not change under existing installations).
    public static func slug(_ text: String) -> String {
        var out = ""
        for c in text.lowercased().unicodeScalars {
            switch c {
            case "a"..."z", "0"..."9": out.unicodeScalars.append(c)
            default: if !out.hasSuffix("_") { out += "_" }
            }
        }
        return out
    }

    private var availability: [Availability] {
        [Availability(topic: topics.aggregatorStatus, payloadAvailable: "online", payloadNotAvailable: "offline")]
    }
}

/// One device and its components, before it is written in either mode.
struct DeviceConfig {
    var id: String
    var device: Device
    /// Shared by every component that has none of its own.
    var availability: [Availability]
    var components: [Component]
}

struct Component {
    var platform: String
    /// The key under `cmps` (device mode) and the object id of the topic (entity mode).
    var id: String
    var config: EntityConfig
}

/// A device-based discovery payload.
struct DevicePayload: Encodable {
    var device: Device
    var origin: Origin
    var availability: [Availability]?
    var components: [String: EntityConfig]

    enum CodingKeys: String, CodingKey {
        case device, origin, availability
        case components = "cmps"
    }
}

/// One entity's config, in Home Assistant's documented key names.
struct EntityConfig: Encodable {
    var platform: String?
    var name: String?
    var uniqueID: String
    var entityID: String
    /// Nil for a button, which has no state.
    var stateTopic: String?
    var valueTemplate: String?
    var jsonAttributesTopic: String?
    var jsonAttributesTemplate: String?
    var sourceType: String?
    var payloadHome: String?
    var payloadNotHome: String?
    var payloadOn: String?
    var payloadOff: String?
    var availability: [Availability]?
    var device: Device?
    var origin: Origin?
    var deviceClass: String?
    var icon: String?
    var stateClass: String?
    var entityCategory: String?
    var options: [String]?
    var unit: String?
    /// A select's: where Home Assistant publishes the option picked, rendered by the template.
    var commandTopic: String?
    var commandTemplate: String?
    /// A button's: what Home Assistant publishes on the command topic when it is pressed.
    var payloadPress: String?

    init(name: String?, uniqueID: String, entityID: String, stateTopic: String?, valueTemplate: String? = nil,
         jsonAttributesTopic: String? = nil, jsonAttributesTemplate: String? = nil, sourceType: String? = nil,
         payloadHome: String? = nil, payloadNotHome: String? = nil, payloadOn: String? = nil, payloadOff: String? = nil,
         availability: [Availability]? = nil, deviceClass: String? = nil, icon: String? = nil,
         stateClass: String? = nil, entityCategory: String? = nil, options: [String]? = nil, unit: String? = nil) {
        self.name = name
        self.uniqueID = uniqueID
        self.entityID = entityID
        self.stateTopic = stateTopic
        self.valueTemplate = valueTemplate
        self.jsonAttributesTopic = jsonAttributesTopic
        self.jsonAttributesTemplate = jsonAttributesTemplate
        self.sourceType = sourceType
        self.payloadHome = payloadHome
        self.payloadNotHome = payloadNotHome
        self.payloadOn = payloadOn
        self.payloadOff = payloadOff
        self.availability = availability
        self.deviceClass = deviceClass
        self.icon = icon
        self.stateClass = stateClass
        self.entityCategory = entityCategory
        self.options = options
        self.unit = unit
    }

    enum CodingKeys: String, CodingKey {
        case name, availability, device, origin, icon, options
        case platform = "p"
        case uniqueID = "unique_id"
        case objectID = "object_id"
        case defaultEntityID = "default_entity_id"
        case stateTopic = "state_topic"
        case valueTemplate = "value_template"
        case jsonAttributesTopic = "json_attributes_topic"
        case jsonAttributesTemplate = "json_attributes_template"
        case sourceType = "source_type"
        case payloadHome = "payload_home"
        case payloadNotHome = "payload_not_home"
        case payloadOn = "payload_on"
        case payloadOff = "payload_off"
        case availabilityMode = "availability_mode"
        case deviceClass = "device_class"
        case stateClass = "state_class"
        case entityCategory = "entity_category"
        case unit = "unit_of_measurement"
        case commandTopic = "command_topic"
        case commandTemplate = "command_template"
        case payloadPress = "payload_press"
    }

    func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encodeIfPresent(platform, forKey: .platform)
        // name: null asks HA to use the device name alone (the tracker is the device's main entity).
        try c.encode(name, forKey: .name)
        try c.encode(uniqueID, forKey: .uniqueID)
        // default_entity_id is what HA 2025.10 and later read; object_id (the part after the
        // platform) is what earlier releases read. Both name the same entity id.
        try c.encode(entityID, forKey: .defaultEntityID)
        try c.encode(String(entityID.split(separator: ".", maxSplits: 1).last ?? ""), forKey: .objectID)
        try c.encodeIfPresent(stateTopic, forKey: .stateTopic)
        try c.encodeIfPresent(valueTemplate, forKey: .valueTemplate)
        try c.encodeIfPresent(jsonAttributesTopic, forKey: .jsonAttributesTopic)
        try c.encodeIfPresent(jsonAttributesTemplate, forKey: .jsonAttributesTemplate)
        try c.encodeIfPresent(sourceType, forKey: .sourceType)
        try c.encodeIfPresent(payloadHome, forKey: .payloadHome)
        try c.encodeIfPresent(payloadNotHome, forKey: .payloadNotHome)
        try c.encodeIfPresent(payloadOn, forKey: .payloadOn)
        try c.encodeIfPresent(payloadOff, forKey: .payloadOff)
        if let availability, !availability.isEmpty {
            try c.encode(availability, forKey: .availability)
            // Every entry must say online: the aggregator is up and the presence is not held.
            if availability.count > 1 { try c.encode("all", forKey: .availabilityMode) }
        }
        try c.encodeIfPresent(device, forKey: .device)
        try c.encodeIfPresent(origin, forKey: .origin)
        try c.encodeIfPresent(deviceClass, forKey: .deviceClass)
        try c.encodeIfPresent(icon, forKey: .icon)
        try c.encodeIfPresent(stateClass, forKey: .stateClass)
        try c.encodeIfPresent(entityCategory, forKey: .entityCategory)
        try c.encodeIfPresent(options, forKey: .options)
        try c.encodeIfPresent(unit, forKey: .unit)
        try c.encodeIfPresent(commandTopic, forKey: .commandTopic)
        try c.encodeIfPresent(commandTemplate, forKey: .commandTemplate)
        try c.encodeIfPresent(payloadPress, forKey: .payloadPress)
    }
}

struct Availability: Encodable {
    var topic: String
    var payloadAvailable: String
    var payloadNotAvailable: String
    var valueTemplate: String?

    enum CodingKeys: String, CodingKey {
        case topic
        case payloadAvailable = "payload_available"
        case payloadNotAvailable = "payload_not_available"
        case valueTemplate = "value_template"
    }
}

/// Who publishes the configs (shown in HA's MQTT logs and device info).
struct Origin: Encodable {
    var name: String
    var swVersion: String
    var supportURL: String?

    enum CodingKeys: String, CodingKey {
        case name
        case swVersion = "sw_version"
        case supportURL = "support_url"
    }
}

struct Device: Encodable {
    var identifiers: [String]
    var name: String
    var manufacturer: String
    var model: String
    var viaDevice: String?
    var suggestedArea: String?

    init(identifiers: [String], name: String, manufacturer: String, model: String, viaDevice: String?, suggestedArea: String? = nil) {
        self.identifiers = identifiers
        self.name = name
        self.manufacturer = manufacturer
        self.model = model
        self.viaDevice = viaDevice
        self.suggestedArea = suggestedArea
    }

    enum CodingKeys: String, CodingKey {
        case identifiers, name, manufacturer, model
        case viaDevice = "via_device"
        case suggestedArea = "suggested_area"
    }
}
