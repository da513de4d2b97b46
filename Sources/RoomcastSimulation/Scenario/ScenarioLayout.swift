import Shared

/// `layout.json` of a scenario: rooms, receiver nodes and the time span
/// (format: /docs/simulator.md, shared with the real-data sets).
public struct ScenarioLayout: Codable, Sendable, Equatable {
    public var rooms: [Room]
    public var nodes: [Node]
    /// Unix seconds of the scenario start.
    public var t0: Double
    /// Seconds.
    public var duration: Double

    public init(rooms: [Room], nodes: [Node], t0: Double, duration: Double) {
        self.rooms = rooms
        self.nodes = nodes
        self.t0 = t0
        self.duration = duration
    }

    /// One room: a rectangle or a polygon on one floor, metres.
    public struct Room: Codable, Sendable, Equatable {
        public var name: String
        public var floor: Int
        /// [x0, y0, x1, y1], when the room was given as a rectangle.
        public var rect: [Double]?
        /// [[x, y], ...], when given as a polygon.
        public var polygon: [[Double]]?
        /// The open space the room is a zone of (the site's `rooms[].open_plan`): zones of
        /// one open plan meet without a wall.
        public var openPlan: String?
        /// The open stretches of the room's walls (the site's `rooms[].doorways`), each
        /// [[x, y], [x, y]] on its outline.
        public var doorways: [[[Double]]]?

        public init(name: String, floor: Int, rect: [Double], openPlan: String? = nil) {
            self.name = name
            self.floor = floor
            self.rect = rect
            self.openPlan = openPlan
        }

        public init(name: String, floor: Int, polygon: [[Double]], openPlan: String? = nil, doorways: [[[Double]]]? = nil) {
            self.name = name
            self.floor = floor
            self.polygon = polygon
            self.openPlan = openPlan
            self.doorways = doorways
        }

        /// The outline as points, whichever way it was given; empty when malformed.
        public var outline: [Point] {
            if let r = rect, r.count == 4 {
                let (x0, y0, x1, y1) = (min(r[0], r[2]), min(r[1], r[3]), max(r[0], r[2]), max(r[1], r[3]))
                return [Point(x0, y0), Point(x1, y0), Point(x1, y1), Point(x0, y1)]
            }
            return SiteModel.points(of: polygon ?? []).map { Point($0.x, $0.y) }
        }

        /// Whether `p` lies inside the outline (even-odd rule; edges count as inside
        /// for the lower/left boundary only, so shared walls belong to one room).
        public func contains(_ p: Point) -> Bool {
            Geometry.contains(outline, p)
        }

        enum CodingKeys: String, CodingKey {
            case name, floor, rect, polygon
            case openPlan = "open_plan"
            case doorways
        }

        public init(from decoder: Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            name = try c.decode(String.self, forKey: .name)
            floor = try c.decodeIfPresent(Int.self, forKey: .floor) ?? 0
            rect = try c.decodeIfPresent([Double].self, forKey: .rect)
            polygon = try c.decodeIfPresent([[Double]].self, forKey: .polygon)
            openPlan = try c.decodeIfPresent(String.self, forKey: .openPlan)
            doorways = try c.decodeIfPresent([[[Double]]].self, forKey: .doorways)
        }

        public func encode(to encoder: Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(name, forKey: .name)
            try c.encode(floor, forKey: .floor)
            try c.encodeIfPresent(rect, forKey: .rect)
            try c.encodeIfPresent(polygon, forKey: .polygon)
            try c.encodeIfPresent(openPlan, forKey: .openPlan)
            try c.encodeIfPresent(doorways, forKey: .doorways)
        }
    }

    /// One receiver node; `z` is the height above its floor.
    public struct Node: Codable, Sendable, Equatable {
        public var name: String
        public var room: String?
        public var floor: Int
        public var x: Double
        public var y: Double
        public var z: Double
        /// The beacon the node transmits itself, if any (calibration; never tracked).
        public var beacon: BeaconID?

        public init(name: String, room: String?, floor: Int, x: Double, y: Double, z: Double,
                    beacon: BeaconID? = nil) {
            self.name = name
            self.room = room
            self.floor = floor
            self.x = x
            self.y = y
            self.z = z
            self.beacon = beacon
        }

        enum CodingKeys: String, CodingKey { case name, room, floor, x, y, z, beacon }

        public init(from decoder: Decoder) throws {
            let c = try decoder.container(keyedBy: CodingKeys.self)
            name = try c.decode(String.self, forKey: .name)
            room = try c.decodeIfPresent(String.self, forKey: .room)
            floor = try c.decodeIfPresent(Int.self, forKey: .floor) ?? 0
            x = try c.decode(Double.self, forKey: .x)
            y = try c.decode(Double.self, forKey: .y)
            z = try c.decodeIfPresent(Double.self, forKey: .z) ?? 1.2
            beacon = try c.decodeIfPresent(BeaconID.self, forKey: .beacon)
        }
    }

    /// The room containing a point on a floor, if any.
    public func room(at p: Point, floor: Int) -> Room? {
        rooms.first { $0.floor == floor && $0.contains(p) }
    }

    /// The site model the aggregator and estimators see: rooms with outlines and nodes
    /// with absolute positions (floors `floorHeight` metres apart).
    public func siteModel(floorHeight: Double = 3.0) -> SiteModel {
        SiteModel(
            rooms: rooms.map { r in
                SiteModel.Room(name: r.name, floor: r.floor, polygon: r.outline.map { [$0.x, $0.y] }, openPlan: r.openPlan,
                               doorways: r.doorways)
            },
            nodes: nodes.map { n in
                SiteModel.Node(name: n.name, room: n.room,
                               position: [n.x, n.y, Double(n.floor) * floorHeight + n.z], beacon: n.beacon)
            })
    }

    /// Every problem with the layout; empty when valid.
    public func problems() -> [String] {
        var out: [String] = []
        var names = Set<String>()
        for (i, r) in rooms.enumerated() {
            if !names.insert(r.name).inserted { out.append("rooms[\(i)].name: duplicate '\(r.name)'") }
            if r.outline.count < 3 { out.append("rooms[\(i)]: needs rect [x0,y0,x1,y1] or a polygon of >= 3 points") }
        }
        var nodeNames = Set<String>()
        for (i, n) in nodes.enumerated() {
            if !nodeNames.insert(n.name).inserted { out.append("nodes[\(i)].name: duplicate '\(n.name)'") }
            if let room = n.room, !names.contains(room) { out.append("nodes[\(i)].room: unknown room '\(room)'") }
        }
        if !(duration > 0) { out.append("duration: must be > 0") }
        return out
    }
}
