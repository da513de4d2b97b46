/// The site as the aggregator sees it: rooms, receiver nodes, known beacons and the people
/// who carry them (the `rooms:` / `nodes:` / `beacons:` / `people:` sections of the config).
public struct SiteModel: Codable, Sendable, Equatable {
    public var rooms: [Room]
    public var nodes: [Node]
    /// Known beacons; empty means every beacon heard is tracked.
    public var beacons: [KnownBeacon]
    /// People, each with the beacons (tags, phones) that are theirs.
    public var people: [Person]

    public init(rooms: [Room] = [], nodes: [Node] = [], beacons: [KnownBeacon] = [], people: [Person] = []) {
        self.rooms = rooms
        self.nodes = nodes
        self.beacons = beacons
        self.people = people
    }

    public struct Room: Codable, Sendable, Equatable {
        public var name: String
        /// Integer level; 0 when not given.
        public var floor: Int
        /// Outline in metres, [[x, y], ...], optional.
        public var polygon: [[Double]]?
        /// What people read (Home Assistant's device and entity names); nil: derived from `name`
        /// (`DisplayName.title(for:)`).
        public var displayName: String?
        /// The Home Assistant area the room's devices join; nil: the display name.
        public var area: String?
        /// The open space this room is a zone of: rooms with the same `open_plan` meet without
        /// a wall (a kitchen-diner split in two, the quadrants of an office floor). Positions
        /// count no wall loss where they meet; nil: a room with walls of its own.
        public var openPlan: String?
        /// The open stretches of the room's walls, each from one point of its outline to
        /// another, [[x, y], [x, y]] in metres: a doorway, or an opening into the next room.
        /// Positions count no wall where a line passes through one; nil: walls all round.
        public var doorways: [[[Double]]]?

        public init(name: String, floor: Int = 0, polygon: [[Double]]? = nil, displayName: String? = nil, area: String? = nil,
                    openPlan: String? = nil, doorways: [[[Double]]]? = nil) {
            self.name = name
            self.floor = floor
            self.polygon = polygon
            self.displayName = displayName
            self.area = area
            self.openPlan = openPlan
            self.doorways = doorways
        }

        /// The name shown to people: `display_name`, else derived from the id.
        public var title: String { displayName ?? DisplayName.title(for: name) }

        enum CodingKeys: String, CodingKey {
            case name, floor, polygon, area
            case displayName = "display_name"
            case openPlan = "open_plan"
            case doorways
        }

        public init(from decoder: Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            name = try c.decode(String.self, forKey: .name)
            floor = try c.decodeIfPresent(Int.self, forKey: .floor) ?? 0
            polygon = try c.decodeIfPresent([[Double]].self, forKey: .polygon)
            displayName = try c.decodeIfPresent(String.self, forKey: .displayName)
            area = try c.decodeIfPresent(String.self, forKey: .area)
            openPlan = try c.decodeIfPresent(String.self, forKey: .openPlan)
            doorways = try c.decodeIfPresent([[[Double]]].self, forKey: .doorways)
        }
    }

    public struct Node: Codable, Sendable, Equatable {
        public var name: String
        public var room: String?
        /// [x, y, z] in metres, z absolute; optional.
        public var position: [Double]?
        /// Added to every RSSI this node reports, in dB.
        public var rxAdjust: Double
        /// The beacon this node transmits itself (the agent's `advertise:`), if any. Other
        /// nodes hearing it from a known position teach the fusion their receiver offsets;
        /// it is never tracked as a beacon.
        public var beacon: BeaconID?
        /// What people read; nil: derived from `name` (`DisplayName.title(for:)`).
        public var displayName: String?

        public init(name: String, room: String?, position: [Double]? = nil, rxAdjust: Double = 0,
                    beacon: BeaconID? = nil, displayName: String? = nil) {
            self.name = name
            self.room = room
            self.position = position
            self.rxAdjust = rxAdjust
            self.beacon = beacon
            self.displayName = displayName
        }

        /// The name shown to people: `display_name`, else derived from the id.
        public var title: String { displayName ?? DisplayName.title(for: name) }

        enum CodingKeys: String, CodingKey {
            case name, room, position, beacon
            case rxAdjust = "rx_adjust"
            case displayName = "display_name"
        }

        public init(from decoder: Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            name = try c.decode(String.self, forKey: .name)
            room = try c.decodeIfPresent(String.self, forKey: .room)
            position = try c.decodeIfPresent([Double].self, forKey: .position)
            rxAdjust = try c.decodeIfPresent(Double.self, forKey: .rxAdjust) ?? 0
            beacon = try c.decodeIfPresent(BeaconID.self, forKey: .beacon)
            displayName = try c.decodeIfPresent(String.self, forKey: .displayName)
        }
    }

    public struct KnownBeacon: Codable, Sendable, Equatable {
        public var id: BeaconID
        public var name: String?
        /// Reference RSSI at 1 m, overriding what the beacon advertises.
        public var power: Int?
        /// It advertises only while moved (a tag set to motion-triggered advertising): a
        /// silence that begins while it holds still is a rest where it lies, not leaving.
        public var sleepsWhenStill: Bool

        public init(id: BeaconID, name: String? = nil, power: Int? = nil, sleepsWhenStill: Bool = false) {
            self.id = id
            self.name = name
            self.power = power
            self.sleepsWhenStill = sleepsWhenStill
        }

        enum CodingKeys: String, CodingKey {
            case id, name, power
            case sleepsWhenStill = "sleeps_when_still"
        }

        public init(from decoder: Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            id = try c.decode(BeaconID.self, forKey: .id)
            name = try c.decodeIfPresent(String.self, forKey: .name)
            power = try c.decodeIfPresent(Int.self, forKey: .power)
            sleepsWhenStill = try c.decodeIfPresent(Bool.self, forKey: .sleepsWhenStill) ?? false
        }

        public func encode(to encoder: Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(id, forKey: .id)
            try c.encodeIfPresent(name, forKey: .name)
            try c.encodeIfPresent(power, forKey: .power)
            // Left out when false, so a site written before it reads and writes as it was.
            if sleepsWhenStill { try c.encode(true, forKey: .sleepsWhenStill) }
        }
    }

    /// A person: present in the room of whichever of their beacons was placed most recently and
    /// most confidently (`PeopleTracker`), counted once however many of them are in a room.
    public struct Person: Codable, Sendable, Equatable {
        /// Topic-safe id (`roomcast/people/<id>`); derived from the name when not given.
        public var id: String
        public var name: String
        /// Their beacons and phones (beacon ids); each belongs to one person at most.
        public var beacons: [BeaconID]

        public init(id: String? = nil, name: String, beacons: [BeaconID]) {
            self.id = id ?? DisplayName.slug(name)
            self.name = name
            self.beacons = beacons
        }

        public init(from decoder: Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            name = try c.decode(String.self, forKey: .name)
            id = try c.decodeIfPresent(String.self, forKey: .id) ?? DisplayName.slug(name)
            beacons = try c.decodeIfPresent([BeaconID].self, forKey: .beacons) ?? []
        }
    }

    /// The person each assigned beacon belongs to.
    public var personOfBeacon: [BeaconID: String] {
        var out: [BeaconID: String] = [:]
        for p in people { for b in p.beacons where out[b] == nil { out[b] = p.id } }
        return out
    }

    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        rooms = try c.decodeIfPresent([Room].self, forKey: .rooms) ?? []
        nodes = try c.decodeIfPresent([Node].self, forKey: .nodes) ?? []
        beacons = try c.decodeIfPresent([KnownBeacon].self, forKey: .beacons) ?? []
        people = try c.decodeIfPresent([Person].self, forKey: .people) ?? []
    }
}

extension SiteModel {
    /// The vertices of a polygon as written (`[[x, y], …]`, metres): each entry with at least
    /// two numbers, both finite, gives (x, y); others are skipped. The one reading of room
    /// outlines for everything that draws them (fusion's geometry, the simulator's plans).
    public static func points(of polygon: [[Double]]) -> [(x: Double, y: Double)] {
        polygon.compactMap { p in p.count >= 2 && p[0].isFinite && p[1].isFinite ? (p[0], p[1]) : nil }
    }
}
