import Foundation
import Shared

/// Teaching rooms from Home Assistant: a select per tracked beacon (docs/mqtt-api.md,
/// Teaching rooms).
extension HomeAssistantDiscovery {
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
    func teachSelects(_ beacons: [(id: BeaconID, name: String)], deviceName: String) -> [Component] {
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
        let slug = Self.discoveryID(beacon.rawValue)
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

    /// True when tracked beacons get a teaching select: teaching is on and there are two rooms to
    /// tell apart (on a one-room site a beacon heard at all is in it).
    public var offersTeaching: Bool { teaching && siteRooms.count >= 2 }

    /// Each room's option in a select or an enum sensor, its display name (with its id beside it
    /// where two rooms share one, or where it is the option `reserved` takes: `Not teaching`,
    /// `Away`), and the template tables from option to room id and back.
    struct RoomTitles: Sendable {
        var options: [String]
        var byOption: String
        var byRoom: String
        /// Each room's name as Home Assistant shows it, by room id.
        var shown: [String: String]

        init(_ rooms: [SiteModel.Room], reserved: String) {
            var seen: [String: Int] = [:]
            // Case folded: Home Assistant matches areas so, and entity ids are lower case.
            for r in rooms { seen[r.title.lowercased(), default: 0] += 1 }
            let pairs = rooms.map { r in
                (room: r.name, option: seen[r.title.lowercased(), default: 0] > 1 || r.title == reserved ? "\(r.title) (\(r.name))" : r.title)
            }
            options = pairs.map(\.option)
            shown = Dictionary(pairs.map { ($0.room, $0.option) }, uniquingKeysWith: { a, _ in a })
            byOption = pairs.map { "'\(HomeAssistantDiscovery.templateString($0.option))': '\(HomeAssistantDiscovery.templateString($0.room))'" }
                .joined(separator: ", ")
            byRoom = pairs.map { "'\(HomeAssistantDiscovery.templateString($0.room))': '\(HomeAssistantDiscovery.templateString($0.option))'" }
                .joined(separator: ", ")
        }
    }
}
