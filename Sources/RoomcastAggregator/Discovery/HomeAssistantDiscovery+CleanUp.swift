import Foundation
import Shared

/// What goes when the site changes: removals, the configs read back from the broker, hand-overs
/// between devices, and migration between the device and per-entity modes.
extension HomeAssistantDiscovery {
    /// Empty retained configs that remove one beacon's entities.
    public func beaconRemovals(id: BeaconID) throws -> [OutboundMessage] {
        try beaconConfigs(id: id, name: nil).map { Self.emptied($0.topic) }
    }

    /// Empty retained payloads for Roomcast configs on the broker that are no longer wanted
    /// (a beacon removed from the config, a person's beacon that now belongs to them, the other
    /// mode's configs that no wanted one replaces).
    public func removals(existing: Set<String>, wanted: [OutboundMessage]) -> [OutboundMessage] {
        // The other mode's configs of a wanted one are migrated by whoever publishes it (another
        // partition, or this aggregator when it announces the beacon), not removed.
        let keep = Set(wanted.map(\.topic) + wanted.flatMap(otherModeTopics))
        return existing.subtracting(keep).filter(isOurs).sorted().map(Self.emptied)
    }

    /// Empty retained payloads for the configs on the broker (`onBroker`, with `entityDevices`
    /// from `entityDevice` for the per-entity ones) of devices that the config of `site` (the whole
    /// site's) alone says are gone: a person not in it; with beacons listed, a beacon not listed or
    /// now a person's; with nodes listed, a room or node not in it. These go before the start's
    /// configs: a beacon replaced under the same name, a room given another id, a person given an
    /// `id` has a new device whose entity ids its old one still holds, and Home Assistant gives the
    /// new entities `_2` ids (`device_tracker.keys_2`), which they keep. Beacons heard but not
    /// listed and nodes made of what is heard wait for the clean-up after the start (`removals`).
    public func goneFromTheConfig(onBroker: Set<String>, entityDevices: [String: String], site: SiteModel) -> [OutboundMessage] {
        let kept = Set(siteDevices(site).map(\.id))
        var decided = ["roomcast_person_"]
        if !site.beacons.isEmpty { decided.append("roomcast_beacon_") }
        if !site.nodes.isEmpty { decided += ["roomcast_room_", "roomcast_node_"] }
        return onBroker.filter { topic in
            guard isOurs(topic), let device = deviceID(ofTopic: topic) ?? entityDevices[topic] else { return false }
            return !kept.contains(device) && decided.contains { device.hasPrefix($0) }
        }.sorted().map(Self.emptied)
    }

    /// How long after `goneFromTheConfig`'s removals the start's configs wait. Home Assistant takes
    /// an entity out of its registry when its config is emptied, but out of its states a moment
    /// later, in a task of its own; a new entity named before then gets a `_2` id for good (so
    /// 2024.3 does in `HomeAssistantTests` when the new configs follow at once). A few seconds,
    /// for a Home Assistant busy on a Pi: paid only at a start after the config changed.
    public static var removalLead: Double { 3 }

    /// The components (id → platform) of one of our device configs as read back from the
    /// broker; nil for an entity-mode topic or a payload that is not one.
    public func deviceComponents(topic: String, payload: [UInt8]) -> [String: String]? {
        struct Device: Decodable {
            struct Component: Decodable { let p: String? }
            let cmps: [String: Component]?
        }
        guard deviceID(ofTopic: topic) != nil, let device = try? JSONDecoder().decode(Device.self, from: Data(payload)),
              let cmps = device.cmps, cmps.count <= Self.maximumComponentsPerDevice else { return nil }
        // Ours are short; a longer id is none of ours to remove.
        return cmps.filter { $0.key.utf8.count <= 255 }.compactMapValues(\.p)
    }

    /// Components of one device config read back at most.
    static var maximumComponentsPerDevice: Int { 4096 }

    /// The device configs of `wanted` that leave out components their copy on the broker had
    /// (`onBroker`, from `deviceComponents`): a node's distance sensor of a beacon taken out of
    /// the config, the teaching entities turned off. Home Assistant removes a component only
    /// when its entry is `{"p": <platform>}` alone, and keeps one left out (live, on a state topic
    /// that may be cleared). Each such config goes out with those entries added, then as wanted,
    /// which is what stays retained.
    public func componentRemovals(onBroker: [String: [String: String]], wanted: [OutboundMessage]) -> [OutboundMessage] {
        var out: [OutboundMessage] = []
        for message in wanted {
            guard let had = onBroker[message.topic],
                  var root = (try? JSONSerialization.jsonObject(with: Data(message.payload))) as? [String: Any],
                  var cmps = root["cmps"] as? [String: Any] else { continue }
            let dropped = had.filter { cmps[$0.key] == nil }
            guard !dropped.isEmpty else { continue }
            for (id, platform) in dropped { cmps[id] = ["p": platform] }
            root["cmps"] = cmps
            guard let data = try? JSONSerialization.data(withJSONObject: root, options: [.sortedKeys, .withoutEscapingSlashes]) else { continue }
            out += [OutboundMessage(topic: message.topic, payload: Array(data), retain: true, qos: 1), message]
        }
        return out
    }

    /// The device (its first identifier) of one of our entity-mode configs as read back from the
    /// broker; nil for a device-mode topic or a payload that is not one.
    public func entityDevice(topic: String, payload: [UInt8]) -> String? {
        struct Entity: Decodable {
            struct Device: Decodable { let identifiers: [String]? }
            let device: Device?
        }
        guard deviceID(ofTopic: topic) == nil, let entity = try? JSONDecoder().decode(Entity.self, from: Data(payload)),
              let id = entity.device?.identifiers?.first, id.utf8.count <= 255 else { return nil }
        return id
    }

    /// What our configs on the broker must let go of before `wanted` (the start's configs) goes
    /// out: a component that another device now carries. A beacon that joined a person has its
    /// teaching select on the person's device; one a person gave away has it on its own again.
    /// Home Assistant refuses a component whose unique id a live entity still holds, until it
    /// restarts, and keeps a rediscovered entity on its first device, so the old holder lets go
    /// first. A device config (`components`, from `deviceComponents`) that no config of
    /// `wanted` names is emptied; one that stays, in device mode, goes out once more with those
    /// components as `{"p": <platform>}` (its wanted config follows with the start's). An
    /// entity config (`devices`, from `entityDevice`) now on another device has its topic
    /// emptied, then written again with the start's (HA takes one topic's messages in order).
    /// Returns the messages and the device configs' components after them.
    public func handovers(components: [String: [String: String]], devices: [String: String], wanted: [OutboundMessage])
        -> (messages: [OutboundMessage], components: [String: [String: String]]) {
        var holder: [String: String] = [:], deviceConfigs: [String: OutboundMessage] = [:], named: Set<String> = []
        var messages: [OutboundMessage] = []
        for message in wanted {
            if let id = deviceID(ofTopic: message.topic) {
                deviceConfigs[id] = message
                named.insert(id)
                for component in (deviceComponents(topic: message.topic, payload: message.payload) ?? [:]).keys {
                    holder[component] = id
                }
            } else if let device = entityDevice(topic: message.topic, payload: message.payload) {
                named.insert(device)
                holder[Self.objectID(ofTopic: message.topic)] = device
                if let was = devices[message.topic], was != device { messages.append(Self.emptied(message.topic)) }
            }
        }
        var after = components
        for (topic, had) in components.sorted(by: { $0.key < $1.key }) {
            guard let id = deviceID(ofTopic: topic) else { continue }
            let taken = had.filter { holder[$0.key].map { $0 != id } ?? false }
            guard !taken.isEmpty else { continue }
            if let own = deviceConfigs[id] {
                guard let removal = componentRemovals(onBroker: [topic: taken], wanted: [own]).first else { continue }
                messages.append(removal)
                after[topic] = had.filter { taken[$0.key] == nil }
            } else if !named.contains(id) {
                messages.append(Self.emptied(topic))
                after[topic] = nil
            }
            // Else an entity-mode site migrates the device with the configs that name it.
        }
        return (messages, after)
    }

    /// An empty retained payload on `topic`: Home Assistant removes what it configured.
    private static func emptied(_ topic: String) -> OutboundMessage {
        OutboundMessage(topic: topic, payload: [], retain: true, qos: 1)
    }

    /// The object id of a config topic (`<prefix>/<platform>/<object id>/config`): an entity
    /// config's component id.
    private static func objectID(ofTopic topic: String) -> String {
        let levels = topic.split(separator: "/", omittingEmptySubsequences: false)
        return levels.count >= 2 ? String(levels[levels.count - 2]) : topic
    }

    /// True for a config topic of the mode this aggregator does not publish (what `migrating`
    /// may replace).
    public func isOtherModeTopic(_ topic: String) -> Bool {
        (deviceID(ofTopic: topic) != nil) != (mode == .device)
    }

    /// `configs` with Home Assistant's migration between the two discovery schemas around them,
    /// for the configs of the other mode in `legacy` (read back from the broker): a site upgrading
    /// from per-entity configs, or switching `discovery.mode` either way. First `{"migrate_discovery":
    /// true}` on each old topic (HA unloads its entities but keeps their registry entries: entity
    /// ids, areas, history), then the configs (HA adopts the entities by unique_id), then an empty
    /// retained payload on the old topics (nothing left to remove, so nothing is). Returns the old
    /// topics used.
    public func migrating(_ configs: [OutboundMessage], legacy: Set<String>) -> (messages: [OutboundMessage], migrated: Set<String>) {
        guard !legacy.isEmpty else { return (configs, []) }
        var old: [String] = [], migrated: Set<String> = []
        for config in configs {
            for topic in otherModeTopics(of: config) where legacy.contains(topic) && migrated.insert(topic).inserted {
                old.append(topic)
            }
        }
        let before = old.map { OutboundMessage(topic: $0, text: #"{"migrate_discovery":true}"#, retain: true, qos: 1) }
        let after = old.map(Self.emptied)
        return (before + configs + after, migrated)
    }

    /// The topics one of our configs had in the other mode: a device config's per-entity topics,
    /// an entity config's device topic (a device's first identifier is its config's id).
    private func otherModeTopics(of config: OutboundMessage) -> [String] {
        if let components = deviceComponents(topic: config.topic, payload: config.payload) {
            return components.sorted { $0.key < $1.key }.map { "\(prefix)/\($0.value)/\($0.key)/config" }
        }
        return entityDevice(topic: config.topic, payload: config.payload).map { ["\(prefix)/device/\($0)/config"] } ?? []
    }

    /// The device id of a device-mode config topic.
    private func deviceID(ofTopic topic: String) -> String? {
        let head = "\(prefix)/device/"
        guard topic.hasPrefix(head), topic.hasSuffix("/config") else { return nil }
        return String(topic.dropFirst(head.count).dropLast("/config".count))
    }
}
