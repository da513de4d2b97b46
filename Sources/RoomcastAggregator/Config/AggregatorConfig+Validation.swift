import Foundation
import RoomcastConfig
import RoomcastFusion
import Shared

extension AggregatorConfig {
    /// Every semantic problem of the site and the settings.
    public func validate() -> [ConfigProblem] {
        var checks = ConfigChecks()
        mqtt.validate(at: "mqtt", into: &checks)

        let coordinate = -100_000.0...100_000.0
        for (i, room) in rooms.enumerated() {
            let path = "rooms[\(i)]"
            checks.topicName(room.name, at: path + ".name")
            checks.displayName(room.displayName, at: path + ".display_name")
            checks.displayName(room.area, at: path + ".area")
            checks.displayName(room.openPlan, at: path + ".open_plan")
            checks.range(room.floor, Self.floors, at: path + ".floor")
            if let polygon = room.polygon {
                if polygon.count < 3 {
                    checks.add(path + ".polygon", "needs at least 3 points, found \(polygon.count)")
                }
                for (j, point) in polygon.enumerated() {
                    if point.count != 2 {
                        checks.add("\(path).polygon[\(j)]", "must be [x, y] (2 numbers), found \(point.count)")
                    } else if !point.allSatisfy(coordinate.contains) {
                        checks.add("\(path).polygon[\(j)]", "coordinates must be within ±100000 m")
                    }
                }
                // A polygon on one line holds no place to put a beacon: its room could never be shown.
                let points = polygon.filter { $0.count == 2 && $0.allSatisfy(coordinate.contains) }
                if polygon.count >= 3, points.count == polygon.count, Self.area(of: points) < 0.01 {
                    checks.add(path + ".polygon", "encloses no area: its points lie on one line")
                }
            }
            checkDoorways(room, at: path, coordinates: coordinate, into: &checks)
        }
        checks.unique(rooms.map(\.name), list: "rooms")
        // `<prefix>/presence/<id>/room` says `not_home` for away (what a device tracker reads).
        for (i, room) in rooms.enumerated() where room.name == PresencePublisher.awayText {
            checks.add("rooms[\(i)].name", "'\(room.name)' is what a beacon's room topic says for away; name the room otherwise")
        }
        if discovery.enabled {
            Self.discoveryIDsDistinct(rooms.map(\.name), list: "rooms", kind: "room", into: &checks)
            // A beacon's room sensor shows a room's title, or `Away` when it is away.
            for (i, room) in rooms.enumerated()
            where room.title.caseInsensitiveCompare(HomeAssistantDiscovery.awayOption) == .orderedSame {
                checks.add("rooms[\(i)]", "is shown in Home Assistant as '\(HomeAssistantDiscovery.awayOption)', which a room sensor shows for away; give it a display_name")
            }
        }
        // An open plan is where zones meet: one zone alone is most likely a misspelt name.
        var zones: [String: Int] = [:]
        for room in rooms { if let plan = room.openPlan { zones[plan, default: 0] += 1 } }
        for (i, room) in rooms.enumerated() {
            guard let plan = room.openPlan, zones[plan] == 1 else { continue }
            var message = "'\(ConfigNode.excerpt(plan))' names no other room"
            let others = Set(zones.keys).subtracting([plan])
            if let guess = Suggestion.closest(to: plan, in: others) { message += "; did you mean '\(guess)'?" }
            else { message += "; give the rooms that share its open space the same open_plan" }
            checks.add("rooms[\(i)].open_plan", message)
        }

        let roomNames = Set(rooms.map(\.name))
        let floorOf = Dictionary(rooms.map { ($0.name, $0.floor) }, uniquingKeysWith: { first, _ in first })
        // Only well-formed outlines: a malformed polygon is its own problem, named with its room above.
        let outlineOf = Dictionary(rooms.compactMap { room in
            room.polygon.flatMap { p in p.count >= 3 && p.allSatisfy({ $0.count == 2 }) ? (room.name, p) : nil }
        }, uniquingKeysWith: { first, _ in first })
        let storey = FusionModel().floorHeight
        if !nodes.isEmpty, nodes.allSatisfy({ $0.room == nil && $0.position == nil }) {
            // A room-less node helps others place beacons (it hears their fingerprints), but
            // with no node in a room nothing can be placed: the room a Pi's own agent config
            // names is not sent, and listing nodes turns automatic ones off. A one-Pi site listed
            // this way would see no presence at all, with nothing in the log.
            checks.add("nodes", "no node has a room (room:) or a position (position:), so no beacon can be placed; give each node the room it stands in")
        }
        for (i, node) in nodes.enumerated() {
            let path = "nodes[\(i)]"
            checks.topicName(node.name, at: path + ".name")
            checks.displayName(node.displayName, at: path + ".display_name")
            if let room = node.room, !roomNames.contains(room) {
                var message = "unknown room '\(ConfigNode.excerpt(room))'"
                if let guess = Suggestion.closest(to: room, in: roomNames) { message += "; did you mean '\(guess)'?" }
                else if roomNames.isEmpty { message += "; list it under rooms:" }
                checks.add(path + ".room", message)
            }
            if let position = node.position {
                if position.count != 3 {
                    checks.add(path + ".position", "must be [x, y, z] (3 numbers), found \(position.count)")
                } else if !position.allSatisfy(coordinate.contains) {
                    checks.add(path + ".position", "coordinates must be within ±100000 m")
                } else if let floor = node.room.flatMap({ floorOf[$0] }), Self.floors.contains(floor) {
                    // Positions put floor N at N storeys above floor 0's floor: a node whose z is
                    // the height above its own floor (1.2 on floor 1), or floors numbered from 1 at
                    // the ground, would be placed a storey off, and rooms judged by the wrong floor.
                    let (bottom, top) = (Double(floor) * storey, Double(floor + 1) * storey)
                    let z = position[2]
                    if z < bottom - 1 || z > top + 1 {
                        func m(_ x: Double) -> String { String(format: "%g", x) }
                        var message = "z \(m(z)) m is not on its room's floor \(floor), which spans \(m(bottom))…\(m(top)) m: "
                            + "z counts from floor 0's floor (the ground floor's), \(m(storey)) m a storey"
                        if (0..<storey).contains(z) { message += "; a node \(m(z)) m above floor \(floor)'s floor is at z \(m(bottom + z))" }
                        checks.add(path + ".position", message)
                    }
                }
                if position.count == 3, position.allSatisfy(coordinate.contains), let room = node.room,
                   let outline = outlineOf[room],
                   !PlanGeometry.contains(x: position[0], y: position[1], count: outline.count, vertex: { (outline[$0][0], outline[$0][1]) }) {
                    // Fusion places a node by its position and judges the room it stands in by its
                    // room: a Pi moved and given its new room, but not its new position, is placed
                    // where it was. One on a wall may stand a wall's width outside.
                    let off = Self.distance(from: [position[0], position[1]], toOutline: outline)
                    if off > Self.wallWidth {
                        checks.add(path + ".position", "x, y lies \(String(format: "%.2f", off)) m outside its room '\(ConfigNode.excerpt(room))''s polygon: "
                                   + "give the position it has in the room it stands in")
                    }
                }
            }
            checks.range(node.rxAdjust, -50...50, at: path + ".rx_adjust", unit: " dB")
        }
        checks.unique(nodes.map(\.name), list: "nodes")
        if discovery.enabled { Self.discoveryIDsDistinct(nodes.map(\.name), list: "nodes", kind: "node", into: &checks) }
        let tracked = Set(beacons.map(\.id))
        var transmitter: [BeaconID: Int] = [:]
        for (i, node) in nodes.enumerated() {
            guard let beacon = node.beacon else { continue }
            if let j = transmitter[beacon] {
                checks.add("nodes[\(i)].beacon", "duplicate beacon '\(beacon.rawValue)' (also nodes[\(j)])")
            } else {
                transmitter[beacon] = i
            }
            if tracked.contains(beacon) {
                checks.add("nodes[\(i)].beacon", "'\(beacon.rawValue)' is also under beacons:; a node's own beacon calibrates the receivers and is never tracked")
            }
        }
        Self.validate(beacons, list: "beacons", into: &checks)
        // `irk:alice-phone` and `irk:alice_phone` would be one device, their entities one.
        if discovery.enabled {
            Self.discoveryIDsDistinct(beacons.map(\.id.rawValue), list: "beacons", field: "id", kind: "beacon", into: &checks)
        }
        validatePeople(tracked: tracked, nodeBeacons: Set(transmitter.keys), into: &checks)

        let fusionProblems = fusion.tableProblems()
        checks.add(contentsOf: fusionProblems)
        // Sooner, a beacon heard less often than this would be forgotten between its readings and
        // never placed, and one that left forgotten before it was away.
        if fusion.forgetAfter > 0, fusion.forgetAfter < fusion.awayTimeout, fusionProblems.isEmpty {
            checks.add("fusion.forget_after_s", "must be 0 (never) or at least away_timeout_s (\(fusion.awayTimeout) s), found \(fusion.forgetAfter) s")
        }
        // Listed beacons are never evicted, and listed nodes never refused: past the table's
        // size, the rest would be silently never tracked.
        if beacons.count > fusion.maxBeacons, (1...1_000_000).contains(fusion.maxBeacons) {
            checks.add("fusion.max_beacons", "must be at least the number of beacons listed (\(beacons.count))")
        }
        if nodes.count > fusion.maxNodes, (1...4096).contains(fusion.maxNodes) {
            checks.add("fusion.max_nodes", "must be at least the number of nodes listed (\(nodes.count))")
        }

        checks.topicPrefix(discovery.prefix, at: "discovery.prefix")
        checks.range(output.refreshIntervalS, 0...86400, at: "output.refresh_interval_s", unit: " s")
        if output.refreshIntervalS > 0 && output.refreshIntervalS < 1 {
            checks.add("output.refresh_interval_s", "must be 0 (never) or at least 1 s, found \(output.refreshIntervalS): "
                       + "every retained presence and room state would go out again at every tick")
        }

        let floors = Set(rooms.map(\.floor))
        let problemsBeforePartition = checks.problems.count
        for (i, floor) in (partition.floors ?? []).enumerated() where !floors.contains(floor) {
            checks.add("partition.floors[\(i)]", "no room is on floor \(floor)")
        }
        for (i, room) in (partition.rooms ?? []).enumerated() where !roomNames.contains(room) {
            var message = "unknown room '\(ConfigNode.excerpt(room))'"
            if let guess = Suggestion.closest(to: room, in: roomNames) { message += "; did you mean '\(guess)'?" }
            checks.add("partition.rooms[\(i)]", message)
        }
        if partitionName != nil, checks.problems.count == problemsBeforePartition, partitionedSite.nodes.isEmpty {
            checks.add("partition", "no node stands in the partition's rooms; a partition hears only the nodes whose room: is one of its rooms")
        }
        if standby.leaseS < Standby.shortestLeaseS {
            checks.add("standby.lease_s", "must be at least \(Standby.shortestLeaseS) s, found \(standby.leaseS): a shorter lease lapses "
                + "before a stalled broker link is noticed (2.5 s), so a standby that cannot hear would take over")
        } else {
            checks.range(standby.leaseS, Standby.shortestLeaseS...600, at: "standby.lease_s", unit: " s")
        }
        if let u = standby.guardUsername, u.isEmpty { checks.add("standby.guard_username", "must not be empty") }
        http.validate(at: "http", into: &checks)
        if let file = learn.stateFile {
            if file.isEmpty { checks.add("learn.state_file", "must not be empty (leave it out for the default)") }
            else if file.utf8.count > 4096 { checks.add("learn.state_file", "must be at most 4096 bytes") }
            else if file.unicodeScalars.contains(where: { $0.value < 0x20 }) { checks.add("learn.state_file", "must not contain control characters") }
            else if file.hasSuffix("/") { checks.add("learn.state_file", "names a directory; give a file, e.g. \(file)\(Learn.defaultFileName)") }
        }
        return checks.problems
    }

    /// `people:` ids topic-safe and unique, names readable, each beacon someone's at most once,
    /// listed under `beacons:` when that list is given (else it would not be tracked), and not a
    /// node's own.
    private func validatePeople(tracked: Set<BeaconID>, nodeBeacons: Set<BeaconID>, into checks: inout ConfigChecks) {
        var owner: [BeaconID: String] = [:]
        for (i, person) in people.enumerated() {
            let path = "people[\(i)]"
            checks.displayName(person.name, at: path + ".name")
            if person.id.isEmpty {
                checks.add(path + ".id", "could not be derived from the name '\(ConfigNode.excerpt(person.name))' (no letter a-z or digit in it); give an id of letters a-z and digits")
            } else {
                checks.topicName(person.id, at: path + ".id")
            }
            if person.beacons.isEmpty { checks.add(path + ".beacons", "must list at least one beacon id") }
            for (j, beacon) in person.beacons.enumerated() {
                let at = "\(path).beacons[\(j)]"
                if let other = owner[beacon] {
                    checks.add(at, "'\(beacon.rawValue)' is already \(other)'s; a beacon belongs to one person")
                } else {
                    owner[beacon] = person.id
                }
                if !tracked.isEmpty && !tracked.contains(beacon) {
                    checks.add(at, "'\(beacon.rawValue)' is not under beacons:; list it there so it is tracked")
                }
                if nodeBeacons.contains(beacon) {
                    checks.add(at, "'\(beacon.rawValue)' is a node's own beacon (nodes[].beacon), which is never tracked")
                }
            }
        }
        checks.unique(people.map(\.id), list: "people", field: "id")
        if discovery.enabled {
            Self.discoveryIDsDistinct(people.map(\.id), list: "people", field: "id", kind: "person", into: &checks)
        }
    }

    /// Home Assistant's ids keep only `a-z0-9` of a name (`HomeAssistantDiscovery.discoveryID`): two
    /// names that differ only in case or other characters (`Office`, `office`; `kids-room`,
    /// `kids_room`; `кухня`, `спальня`) would be one device, the last published hiding the other.
    static func discoveryIDsDistinct(_ names: [String], list: String, field: String = "name", kind: String,
                                     into checks: inout ConfigChecks) {
        var first: [String: Int] = [:]
        for (i, name) in names.enumerated() {
            let id = "roomcast_\(kind)_\(HomeAssistantDiscovery.discoveryID(name))"
            guard let j = first[id] else {
                first[id] = i
                continue
            }
            guard names[j] != name else { continue }  // a plain duplicate, said already
            // Home Assistant's ids keep a-z and digits only: names in another script are told apart
            // by an id in those, the name people read kept where it is shown.
            let keep = switch kind {
            case "person": "give one an id of letters a-z and digits that differ"
            case "room", "node": "rename one, using letters a-z and digits that differ, and keep the name people read in its display_name"
            default: "rename one, using letters a-z and digits that differ"
            }
            checks.add("\(list)[\(i)].\(field)", "'\(ConfigNode.excerpt(name))' and \(list)[\(j)] '\(ConfigNode.excerpt(names[j]))' "
                       + "are one Home Assistant device (\(id)): \(keep)")
        }
    }

    /// The checks of the known-beacon list `beacons:`.
    static func validate(_ beacons: [SiteModel.KnownBeacon], list: String, into checks: inout ConfigChecks) {
        for (i, beacon) in beacons.enumerated() {
            // Shown (payloads, Home Assistant device names), never a topic level: "Tag #3" is a name.
            checks.displayName(beacon.name, at: "\(list)[\(i)].name")
            // A 1 m RSSI of 0 or more is no reference: 0 put the beacon 100 m away for good.
            if let power = beacon.power { checks.range(power, -127...(-1), at: "\(list)[\(i)].power", unit: " dBm") }
        }
        checks.unique(beacons.map(\.id.rawValue), list: list, field: "id")
    }

    /// A doorway is two points of the room's outline: an open stretch of its walls.
    private func checkDoorways(_ room: SiteModel.Room, at path: String, coordinates: ClosedRange<Double>,
                               into checks: inout ConfigChecks) {
        guard let doorways = room.doorways else { return }
        let outline = (room.polygon ?? []).filter { $0.count == 2 }
        if outline.count < 3 && !doorways.isEmpty {
            checks.add(path + ".doorways", "needs the room's polygon: a doorway is a stretch of its outline")
            return
        }
        // Each is looked up wherever a line crosses from room to room while the grid is built.
        if doorways.count > Self.maxDoorways {
            checks.add(path + ".doorways", "at most \(Self.maxDoorways) per room, found \(doorways.count)")
            return
        }
        for (k, doorway) in doorways.enumerated() {
            let at = "\(path).doorways[\(k)]"
            guard doorway.count == 2 else {
                checks.add(at, "must be [[x, y], [x, y]] (2 points), found \(doorway.count)")
                continue
            }
            var wellFormed = true
            for (j, point) in doorway.enumerated() {
                if point.count != 2 {
                    checks.add("\(at)[\(j)]", "must be [x, y] (2 numbers), found \(point.count)")
                    wellFormed = false
                } else if !point.allSatisfy(coordinates.contains) {
                    checks.add("\(at)[\(j)]", "coordinates must be within ±100000 m")
                    wellFormed = false
                }
            }
            guard wellFormed else { continue }
            let off = doorway.map { Self.distance(from: $0, toOutline: outline) }.max() ?? 0
            if off > Self.wallWidth {
                checks.add(at, "an end lies \(String(format: "%.2f", off)) m from the room's polygon; a doorway is a stretch of its outline")
            }
        }
    }

    /// Doorways a room may list.
    static let maxDoorways = 64

    /// The floors a room may be on; a node's height is checked against its room's floor only
    /// within them (one past Int's range would overflow working out its height).
    static let floors = -100...300

    /// A wall's width: how far a doorway's end may lie from its room's outline (one drawn on the
    /// other room's side of the wall), and a node outside it (a Pi on the wall's other face).
    static let wallWidth = 0.5

    /// The area a polygon of `[x, y]` points encloses (shoelace), in square metres.
    static func area(of polygon: [[Double]]) -> Double {
        var twice = 0.0
        for (a, b) in zip(polygon, polygon.dropFirst() + polygon.prefix(1)) { twice += a[0] * b[1] - b[0] * a[1] }
        return abs(twice) / 2
    }

    /// The distance from `point` to the nearest edge of the closed outline `outline`.
    static func distance(from point: [Double], toOutline outline: [[Double]]) -> Double {
        var best = Double.infinity
        for i in outline.indices {
            let a = outline[i], b = outline[(i + 1) % outline.count]
            best = min(best, PlanGeometry.distance(fromX: point[0], y: point[1], toSegmentFromX: a[0], y0: a[1], toX: b[0], y1: b[1]))
        }
        return best
    }
}

