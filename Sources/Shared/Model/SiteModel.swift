/// The site as the aggregator sees it: rooms, receiver nodes and known beacons
/// (the `rooms:` / `nodes:` / `beacons:` sections of the config).
public struct SiteModel: Codable, Sendable, Equatable {
    public var rooms: [Room]
    public var nodes: [Node]
    /// Known beacons; empty means every beacon heard is tracked.
    public var beacons: [KnownBeacon]

    public init(rooms: [Room] = [], nodes: [Node] = [], beacons: [KnownBeacon] = []) {
        self.rooms = rooms
        self.nodes = nodes
        self.beacons = beacons
    }

    public struct Room: Codable, Sendable, Equatable {
        public var name: String
        /// Integer level; 0 when not given.
        public var floor: Int
        /// Outline in metres, [[x, y], ...], optional.
        public var polygon: [[Double]]?

        public init(name: String, floor: Int = 0, polygon: [[Double]]? = nil) {
            self.name = name
            self.floor = floor
            self.polygon = polygon
        }

        public init(from decoder: Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            name = try c.decode(String.self, forKey: .name)
            floor = try c.decodeIfPresent(Int.self, forKey: .floor) ?? 0
            polygon = try c.decodeIfPresent([[Double]].self, forKey: .polygon)
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

        public init(name: String, room: String?, position: [Double]? = nil, rxAdjust: Double = 0,
                    beacon: BeaconID? = nil) {
            self.name = name
            self.room = room
            self.position = position
            self.rxAdjust = rxAdjust
            self.beacon = beacon
        }

        enum CodingKeys: String, CodingKey {
            case name, room, position, beacon
            case rxAdjust = "rx_adjust"
        }

        public init(from decoder: Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            name = try c.decode(String.self, forKey: .name)
            room = try c.decodeIfPresent(String.self, forKey: .room)
            position = try c.decodeIfPresent([Double].self, forKey: .position)
            rxAdjust = try c.decodeIfPresent(Double.self, forKey: .rxAdjust) ?? 0
            beacon = try c.decodeIfPresent(BeaconID.self, forKey: .beacon)
        }
    }

    public struct KnownBeacon: Codable, Sendable, Equatable {
        public var id: BeaconID
        public var name: String?
        /// Reference RSSI at 1 m, overriding what the beacon advertises.
        public var power: Int?

        public init(id: BeaconID, name: String? = nil, power: Int? = nil) {
            self.id = id
            self.name = name
            self.power = power
        }
    }

    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        rooms = try c.decodeIfPresent([Room].self, forKey: .rooms) ?? []
        nodes = try c.decodeIfPresent([Node].self, forKey: .nodes) ?? []
        beacons = try c.decodeIfPresent([KnownBeacon].self, forKey: .beacons) ?? []
    }
}
