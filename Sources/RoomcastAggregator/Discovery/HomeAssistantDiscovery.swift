import Foundation
import Shared

/// Builds Home Assistant MQTT discovery configs (retained, under a prefix,
/// default `homeassistant`) for Roomcast's beacons, rooms and nodes.
///
/// Every entity's availability follows `<prefix>/aggregator/status`; entities
/// are grouped under one device per beacon, room and node, all reached via the
/// aggregator device. unique_ids are derived from ids and names only, so they
/// are stable across restarts. An empty retained payload on a config topic
/// removes the entity (used when a beacon leaves the config).
public struct HomeAssistantDiscovery: Sendable {
    public let prefix: String
    public let topics: Topics

    public init(prefix: String = "homeassistant", topics: Topics) {
        self.prefix = prefix
        self.topics = topics
    }

    /// Discovery configs for one beacon: a device_tracker and a room sensor.
    public func beaconConfigs(id: BeaconID, name: String?, kind: String? = nil) throws -> [OutboundMessage] {
        let slug = Self.slug(id.rawValue)
        let display = name ?? id.rawValue
        let device = Device(identifiers: ["roomcast_beacon_\(slug)"], name: display, manufacturer: "Roomcast",
                            model: kind ?? id.scheme, viaDevice: Self.aggregatorDeviceID)
        let presence = topics.presence(id)
        // The tracker reads the plain-text room topic: Home Assistant's MQTT device_tracker
        // compares a value_template's result with payload_home/payload_not_home only and
        // otherwise takes the raw payload as its state (checked against HA 2024.3.3: the
        // whole JSON became the state and was rejected as longer than 255 characters).
        let tracker = EntityConfig(
            name: nil, uniqueID: "roomcast_\(slug)_tracker", objectID: "roomcast_\(slug)",
            stateTopic: topics.presenceRoom(id),
            jsonAttributesTopic: presence,
            jsonAttributesTemplate: Self.attributesTemplate(["room", "floor", "distance", "confidence", "node", "last_seen"]),
            sourceType: "bluetooth_le", payloadHome: nil, payloadNotHome: PresencePublisher.awayText,
            availability: availability, device: device, icon: "mdi:bluetooth")
        let room = EntityConfig(
            name: "Room", uniqueID: "roomcast_\(slug)_room", objectID: "roomcast_\(slug)_room",
            stateTopic: presence,
            valueTemplate: "{{ value_json.room if value_json.room else 'away' }}",
            jsonAttributesTopic: presence,
            jsonAttributesTemplate: Self.attributesTemplate(["confidence", "node", "distance", "runner_up"]),
            availability: availability, device: device, icon: "mdi:map-marker")
        return [
            try message(component: "device_tracker", objectID: "roomcast_\(slug)", tracker),
            try message(component: "sensor", objectID: "roomcast_\(slug)_room", room),
        ]
    }

    /// Discovery configs for one room: an occupancy binary_sensor and a count sensor.
    public func roomConfigs(room: String, floor: Int?) throws -> [OutboundMessage] {
        let slug = Self.slug(room)
        let device = Device(identifiers: ["roomcast_room_\(slug)"], name: "Room \(room)", manufacturer: "Roomcast",
                            model: floor.map { "room, floor \($0)" } ?? "room", viaDevice: Self.aggregatorDeviceID,
                            suggestedArea: room)
        let state = topics.room(room)
        let occupancy = EntityConfig(
            name: "Occupancy", uniqueID: "roomcast_room_\(slug)_occupancy", objectID: "roomcast_room_\(slug)_occupancy",
            stateTopic: state, valueTemplate: "{{ 'ON' if value_json.occupied else 'OFF' }}",
            jsonAttributesTopic: state, jsonAttributesTemplate: "{{ {'beacons': value_json.beacons} | tojson }}",
            availability: availability, device: device, deviceClass: "occupancy")
        let count = EntityConfig(
            name: "Count", uniqueID: "roomcast_room_\(slug)_count", objectID: "roomcast_room_\(slug)_count",
            stateTopic: state, valueTemplate: "{{ value_json.count }}",
            availability: availability, device: device, icon: "mdi:account-multiple", stateClass: "measurement")
        return [
            try message(component: "binary_sensor", objectID: "roomcast_room_\(slug)_occupancy", occupancy),
            try message(component: "sensor", objectID: "roomcast_room_\(slug)_count", count),
        ]
    }

    /// Discovery config for one node: a connectivity binary_sensor.
    public func nodeConfigs(node: String, room: String?) throws -> [OutboundMessage] {
        let slug = Self.slug(node)
        let device = Device(identifiers: ["roomcast_node_\(slug)"], name: "Roomcast node \(node)", manufacturer: "Roomcast",
                            model: "edge-agent", viaDevice: Self.aggregatorDeviceID, suggestedArea: room)
        let status = EntityConfig(
            name: "Connectivity", uniqueID: "roomcast_node_\(slug)_connectivity", objectID: "roomcast_node_\(slug)_connectivity",
            stateTopic: topics.nodeStatus(node), payloadOn: "online", payloadOff: "offline",
            availability: availability, device: device, deviceClass: "connectivity", entityCategory: "diagnostic")
        return [try message(component: "binary_sensor", objectID: "roomcast_node_\(slug)_connectivity", status)]
    }

    /// The aggregator's own device (the parent every other device is reached via),
    /// with a connectivity binary_sensor on its status topic.
    public func aggregatorConfigs() throws -> [OutboundMessage] {
        let device = Device(identifiers: [Self.aggregatorDeviceID], name: "Roomcast aggregator", manufacturer: "Roomcast",
                            model: "aggregator \(RoomcastVersion.current)", viaDevice: nil)
        let status = EntityConfig(
            name: "Connectivity", uniqueID: "roomcast_aggregator_connectivity", objectID: "roomcast_aggregator_connectivity",
            stateTopic: topics.aggregatorStatus, payloadOn: "online", payloadOff: "offline",
            availability: [], device: device, deviceClass: "connectivity", entityCategory: "diagnostic")
        return [try message(component: "binary_sensor", objectID: "roomcast_aggregator_connectivity", status)]
    }

    /// Every config for a site (known beacons, rooms, nodes) plus the aggregator device.
    public func siteConfigs(_ site: SiteModel) throws -> [OutboundMessage] {
        var out = try aggregatorConfigs()
        for b in site.beacons { out += try beaconConfigs(id: b.id, name: b.name) }
        for r in site.rooms { out += try roomConfigs(room: r.name, floor: r.floor) }
        for n in site.nodes { out += try nodeConfigs(node: n.name, room: n.room) }
        return out
    }

    /// Empty retained payloads for Roomcast configs on the broker that are no
    /// longer wanted (e.g. a beacon removed from the config).
    /// Empty retained configs that remove one beacon's entities.
    public func beaconRemovals(id: BeaconID) throws -> [OutboundMessage] {
        try beaconConfigs(id: id, name: nil).map { OutboundMessage(topic: $0.topic, payload: [], retain: true, qos: 1) }
    }

    public func removals(existing: Set<String>, wanted: [OutboundMessage]) -> [OutboundMessage] {
        let keep = Set(wanted.map(\.topic))
        return existing.subtracting(keep).filter(isOurs).sorted().map { OutboundMessage(topic: $0, payload: [], retain: true, qos: 1) }
    }

    /// The subscription that reads back retained discovery configs.
    public var configFilter: String { "\(prefix)/+/+/config" }

    /// True for a config topic this aggregator owns.
    public func isOurs(_ topic: String) -> Bool {
        // Every inbound message passes here: the suffix test turns readings away without splitting.
        guard topic.hasSuffix("/config") else { return false }
        let levels = topic.split(separator: "/", omittingEmptySubsequences: false)
        return topic.hasPrefix(prefix + "/") && levels.count >= 3 && levels[levels.count - 2].hasPrefix("roomcast_")
            && levels.last == "config"
    }

    static let aggregatorDeviceID = "roomcast_aggregator"

    /// A json_attributes_template picking `keys` from a presence payload. `.get` because optional
    /// keys (`runner_up`, ...) are left out of the payload: HA 2024.3.3 fails to render
    /// `value_json.runner_up` then ("LoggingUndefined is not JSON serializable") and logs an error.
    static func attributesTemplate(_ keys: [String]) -> String {
        "{{ {" + keys.map { "'\($0)': value_json.get('\($0)')" }.joined(separator: ", ") + "} | tojson }}"
    }

    /// A discovery-safe object id: [a-z0-9_].
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

    private func message(component: String, objectID: String, _ config: EntityConfig) throws -> OutboundMessage {
        try OutboundMessage(topic: "\(prefix)/\(component)/\(objectID)/config", json: config, retain: true, qos: 1)
    }
}

/// One discovery payload, in Home Assistant's documented key names.
struct EntityConfig: Encodable {
    var name: String?
    var uniqueID: String
    var objectID: String
    var stateTopic: String
    var valueTemplate: String?
    var jsonAttributesTopic: String?
    var jsonAttributesTemplate: String?
    var sourceType: String?
    var payloadHome: String?
    var payloadNotHome: String?
    var payloadOn: String?
    var payloadOff: String?
    var availability: [Availability]
    var device: Device
    var deviceClass: String?
    var icon: String?
    var stateClass: String?
    var entityCategory: String?

    init(name: String?, uniqueID: String, objectID: String, stateTopic: String, valueTemplate: String? = nil,
         jsonAttributesTopic: String? = nil, jsonAttributesTemplate: String? = nil, sourceType: String? = nil,
         payloadHome: String? = nil, payloadNotHome: String? = nil, payloadOn: String? = nil, payloadOff: String? = nil,
         availability: [Availability], device: Device, deviceClass: String? = nil, icon: String? = nil,
         stateClass: String? = nil, entityCategory: String? = nil) {
        self.name = name
        self.uniqueID = uniqueID
        self.objectID = objectID
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
        self.device = device
        self.deviceClass = deviceClass
        self.icon = icon
        self.stateClass = stateClass
        self.entityCategory = entityCategory
    }

    enum CodingKeys: String, CodingKey {
        case name, availability, device, icon
        case uniqueID = "unique_id"
        case objectID = "object_id"
        case stateTopic = "state_topic"
        case valueTemplate = "value_template"
        case jsonAttributesTopic = "json_attributes_topic"
        case jsonAttributesTemplate = "json_attributes_template"
        case sourceType = "source_type"
        case payloadHome = "payload_home"
        case payloadNotHome = "payload_not_home"
        case payloadOn = "payload_on"
        case payloadOff = "payload_off"
        case deviceClass = "device_class"
        case stateClass = "state_class"
        case entityCategory = "entity_category"
    }

    func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        // name: null asks HA to use the device name alone (the tracker is the device's main entity).
        try c.encode(name, forKey: .name)
        try c.encode(uniqueID, forKey: .uniqueID)
        try c.encode(objectID, forKey: .objectID)
        try c.encode(stateTopic, forKey: .stateTopic)
        try c.encodeIfPresent(valueTemplate, forKey: .valueTemplate)
        try c.encodeIfPresent(jsonAttributesTopic, forKey: .jsonAttributesTopic)
        try c.encodeIfPresent(jsonAttributesTemplate, forKey: .jsonAttributesTemplate)
        try c.encodeIfPresent(sourceType, forKey: .sourceType)
        try c.encodeIfPresent(payloadHome, forKey: .payloadHome)
        try c.encodeIfPresent(payloadNotHome, forKey: .payloadNotHome)
        try c.encodeIfPresent(payloadOn, forKey: .payloadOn)
        try c.encodeIfPresent(payloadOff, forKey: .payloadOff)
        if !availability.isEmpty { try c.encode(availability, forKey: .availability) }
        try c.encode(device, forKey: .device)
        try c.encodeIfPresent(deviceClass, forKey: .deviceClass)
        try c.encodeIfPresent(icon, forKey: .icon)
        try c.encodeIfPresent(stateClass, forKey: .stateClass)
        try c.encodeIfPresent(entityCategory, forKey: .entityCategory)
    }
}

struct Availability: Encodable {
    var topic: String
    var payloadAvailable: String
    var payloadNotAvailable: String

    enum CodingKeys: String, CodingKey {
        case topic
        case payloadAvailable = "payload_available"
        case payloadNotAvailable = "payload_not_available"
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
