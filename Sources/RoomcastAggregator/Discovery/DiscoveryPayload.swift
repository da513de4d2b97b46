import Foundation
import Shared

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
    /// Nil when the names hold letters with no ASCII form (Cyrillic, Greek, CJK): Home Assistant
    /// then builds the id itself, transliterating them.
    var entityID: String?
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
    /// False: Home Assistant registers the entity disabled, for the user to turn on (a
    /// diagnostic whose value changes at every message fills the recorder's history).
    var enabledByDefault: Bool?
    var options: [String]?
    var unit: String?
    /// A select's: where Home Assistant publishes the option picked, rendered by the template.
    var commandTopic: String?
    var commandTemplate: String?
    /// A button's: what Home Assistant publishes on the command topic when it is pressed.
    var payloadPress: String?

    init(name: String?, uniqueID: String, entityID: String?, stateTopic: String?, valueTemplate: String? = nil,
         jsonAttributesTopic: String? = nil, jsonAttributesTemplate: String? = nil, sourceType: String? = nil,
         payloadHome: String? = nil, payloadNotHome: String? = nil, payloadOn: String? = nil, payloadOff: String? = nil,
         availability: [Availability]? = nil, deviceClass: String? = nil, icon: String? = nil,
         stateClass: String? = nil, entityCategory: String? = nil, enabledByDefault: Bool? = nil, options: [String]? = nil,
         unit: String? = nil) {
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
        self.enabledByDefault = enabledByDefault
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
        case enabledByDefault = "enabled_by_default"
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
        try c.encodeIfPresent(entityID, forKey: .defaultEntityID)
        try c.encodeIfPresent(entityID.map { String($0.split(separator: ".", maxSplits: 1).last ?? "") }, forKey: .objectID)
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
        try c.encodeIfPresent(enabledByDefault, forKey: .enabledByDefault)
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
