/// A building to simulate: rooms on floors, where receivers could go, the way out
/// and the stairs. Walls are derived from the room outlines.
public struct FloorPlan: Sendable {
    public var name: String
    public var rooms: [ScenarioLayout.Room]
    /// Metres between floors.
    public var floorHeight: Double = 3.0
    /// The room people leave the building from.
    public var exit: String
    /// Rooms joined by stairs, one per floor, vertically aligned.
    public var stairs: [String] = []
    /// Rooms that get two receivers (large open spaces).
    public var doubleNodes: Set<String> = []
    /// Receivers at fixed spots, by room, instead of seeded ones: a real site's sensors, or
    /// a node whose place is the point of the plan (on a ceiling, in a far corner).
    public var fixedNodes: [String: [NodeSpot]] = [:]
    /// Rooms with no receiver of their own (a home with one node per floor).
    public var nodeless: Set<String> = []
    /// How many of the site's nodes go silent for minutes now and then (agent down, radio
    /// stuck); the default of `SimulationSettings.outages.nodes`.
    public var silentNodes = 0

    /// A receiver's fixed place in its room; `z` is the height above the floor.
    public struct NodeSpot: Sendable, Equatable {
        /// Its name; nil = the generator's `<room>-pi<k>`.
        public var name: String?
        public var x: Double
        public var y: Double
        public var z: Double

        public init(name: String? = nil, x: Double, y: Double, z: Double) {
            self.name = name
            self.x = x
            self.y = y
            self.z = z
        }
    }

    public init(name: String, rooms: [ScenarioLayout.Room], exit: String, stairs: [String] = [],
                doubleNodes: Set<String> = [], fixedNodes: [String: [NodeSpot]] = [:], nodeless: Set<String> = [],
                silentNodes: Int = 0) {
        self.name = name
        self.rooms = rooms
        self.exit = exit
        self.stairs = stairs
        self.doubleNodes = doubleNodes
        self.fixedNodes = fixedNodes
        self.nodeless = nodeless
        self.silentNodes = silentNodes
    }

    /// Names of the built-in plans.
    public static let names = ["house", "flat", "office", "cottage"] + siteNames
    /// The plans the benchmark scores by default (every number in docs/fusion.md); the
    /// cottage, two rooms and two receivers, is asked for by name.
    public static let benchmarkNames = ["house", "flat", "office"]
    /// Sites unlike the standard homes, each a way a real site breaks the rule "every room
    /// has a node and that node is the loudest in it": an open plan with three receivers
    /// per zone and no walls, a room partly heard louder through the floor, one node per
    /// floor, nodes that go silent.
    public static let siteNames = ["openplan", "townhouse", "sparse", "house-outages"]
    /// The plans the benchmark scores by default on `split` (tune, check, holdout): the
    /// standard homes everywhere, and on check the sites unlike them too, so the numbers a
    /// change is judged by include them while tuning never sees them.
    public static func benchmarkNames(split: String) -> [String] {
        split == "check" ? benchmarkNames + siteNames : benchmarkNames
    }

    /// A built-in plan by name.
    public static func named(_ name: String) -> FloorPlan? {
        switch name {
        case "house": return house
        case "flat": return flat
        case "office": return office
        case "cottage": return cottage
        case "openplan": return openplan
        case "townhouse": return townhouse
        case "sparse": return sparse
        case "house-outages": return houseOutages
        default: return nil
        }
    }

    /// Two floors, four rooms each; stairs from the hall to the landing.
    public static let house = FloorPlan(
        name: "house",
        rooms: [
            .init(name: "living", floor: 0, rect: [0, 0, 6, 6]),
            .init(name: "kitchen", floor: 0, rect: [6, 0, 12, 6]),
            .init(name: "hall", floor: 0, rect: [0, 6, 4, 10]),
            .init(name: "office", floor: 0, rect: [4, 6, 12, 10]),
            .init(name: "bedroom", floor: 1, rect: [0, 0, 6, 6]),
            .init(name: "kids", floor: 1, rect: [6, 0, 12, 6]),
            .init(name: "landing", floor: 1, rect: [0, 6, 4, 10]),
            .init(name: "bath", floor: 1, rect: [4, 6, 12, 10]),
        ],
        exit: "hall", stairs: ["hall", "landing"])

    /// One floor: a corridor with five small rooms off it.
    public static let flat = FloorPlan(
        name: "flat",
        rooms: [
            .init(name: "living", floor: 0, rect: [0, 0, 5, 4]),
            .init(name: "kitchen", floor: 0, rect: [5, 0, 8, 4]),
            .init(name: "hall", floor: 0, rect: [0, 4, 8, 5.5]),
            .init(name: "bedroom", floor: 0, rect: [0, 5.5, 4, 9]),
            .init(name: "bath", floor: 0, rect: [4, 5.5, 6, 9]),
            .init(name: "study", floor: 0, polygon: [[6, 5.5], [8, 5.5], [8, 9], [6.8, 9], [6.8, 8], [6, 8]]),
        ],
        exit: "hall")

    /// One floor: an open plan with two receivers, meeting rooms, offices off a corridor.
    public static let office = FloorPlan(
        name: "office",
        rooms: [
            .init(name: "open_plan", floor: 0, rect: [0, 0, 12, 8]),
            .init(name: "meeting_a", floor: 0, rect: [12, 0, 16, 4]),
            .init(name: "meeting_b", floor: 0, rect: [16, 0, 20, 4]),
            .init(name: "kitchen", floor: 0, rect: [12, 4, 20, 8]),
            .init(name: "corridor", floor: 0, rect: [0, 8, 20, 9.5]),
            .init(name: "office_1", floor: 0, rect: [0, 9.5, 5, 13]),
            .init(name: "office_2", floor: 0, rect: [5, 9.5, 10, 13]),
            .init(name: "office_3", floor: 0, rect: [10, 9.5, 15, 13]),
            .init(name: "reception", floor: 0, rect: [15, 9.5, 20, 13]),
        ],
        exit: "reception", doubleNodes: ["open_plan"])

    /// Two rooms, one receiver each: the smallest site, where a move shows on two links only.
    public static let cottage = FloorPlan(
        name: "cottage",
        rooms: [
            .init(name: "living", floor: 0, rect: [0, 0, 6, 5]),
            .init(name: "kitchen", floor: 0, rect: [6, 0, 10, 5]),
        ],
        exit: "living")

    /// An open-plan office laid out as the Daniş recording (../shared/data/rssi/danis-office):
    /// 20.66 × 17.64 m cut into four quadrant zones with no walls between them, three
    /// receivers in each at the recording's positions and heights (one at 1.22 m by the
    /// middle, two at 2.3 m on the outer walls), named as there; out through the south-west.
    public static let openplan: FloorPlan = {
        let (xs, ys) = (10.33, 8.82), (x1, y1) = (20.66, 17.64)
        return FloorPlan(
            name: "openplan",
            rooms: [
                .init(name: "q_sw", floor: 0, rect: [0, 0, xs, ys], openPlan: "office"),
                .init(name: "q_se", floor: 0, rect: [xs, 0, x1, ys], openPlan: "office"),
                .init(name: "q_nw", floor: 0, rect: [0, ys, xs, y1], openPlan: "office"),
                .init(name: "q_ne", floor: 0, rect: [xs, ys, x1, y1], openPlan: "office"),
            ],
            exit: "q_sw",
            // The recording's sensor22 stands on the north wall (y 17.64), which belongs to
            // no zone (a room owns its lower and left edges only): 5 cm inside it here.
            fixedNodes: [
                "q_sw": [.init(name: "sensor10", x: 7.0, y: 7.09, z: 1.22), .init(name: "sensor11", x: 7.18, y: 0.68, z: 2.3),
                         .init(name: "sensor12", x: 0.71, y: 6.16, z: 2.3)],
                "q_nw": [.init(name: "sensor20", x: 7.25, y: 11.36, z: 1.22), .init(name: "sensor21", x: 0.76, y: 12.13, z: 2.3),
                         .init(name: "sensor22", x: 7.18, y: 17.59, z: 2.3)],
                "q_ne": [.init(name: "sensor30", x: 13.14, y: 12.33, z: 1.22), .init(name: "sensor31", x: 12.82, y: 16.83, z: 2.3),
                         .init(name: "sensor32", x: 18.12, y: 11.93, z: 2.3)],
                "q_se": [.init(name: "sensor40", x: 13.01, y: 5.51, z: 1.22), .init(name: "sensor41", x: 17.77, y: 6.33, z: 2.3),
                         .init(name: "sensor42", x: 12.76, y: 0.27, z: 2.3)],
            ])
    }()

    /// Two storeys where the kitchen's node hears the east half of the bedroom above it
    /// louder than the bedroom's own node does: the kitchen node is on the ceiling (2.8 m,
    /// 1.2 m below a tag upstairs: one floor's loss and little distance), and the bedroom is
    /// an L whose node sits at the far end of its other leg (10–12 m and two of the L's
    /// walls from that half). Downstairs: living, kitchen, dining, hall (stairs, exit),
    /// utility; upstairs: the L-shaped bedroom over living, kitchen and dining, the landing
    /// over the hall, a bathroom over the utility room.
    public static let townhouse = FloorPlan(
        name: "townhouse",
        rooms: [
            .init(name: "living", floor: 0, rect: [0, 0, 6, 4]),
            .init(name: "kitchen", floor: 0, rect: [6, 0, 12, 4]),
            .init(name: "dining", floor: 0, rect: [0, 4, 4, 7.5]),
            .init(name: "hall", floor: 0, rect: [4, 4, 7, 7.5]),
            .init(name: "utility", floor: 0, rect: [7, 4, 12, 7.5]),
            .init(name: "bedroom", floor: 1, polygon: [[0, 0], [12, 0], [12, 4], [4, 4], [4, 7.5], [0, 7.5]]),
            .init(name: "landing", floor: 1, rect: [4, 4, 7, 7.5]),
            .init(name: "bath", floor: 1, rect: [7, 4, 12, 7.5]),
        ],
        exit: "hall", stairs: ["hall", "landing"],
        fixedNodes: [
            "kitchen": [.init(x: 10, y: 2, z: 2.8)],
            "bedroom": [.init(x: 0.5, y: 7.0, z: 0.8)],
        ])

    /// The two-storey house with one node per floor, in the living room and on the landing:
    /// six of its eight rooms have no node of their own.
    public static let sparse: FloorPlan = {
        var plan = house
        plan.name = "sparse"
        plan.nodeless = ["kitchen", "hall", "office", "bedroom", "kids", "bath"]
        return plan
    }()

    /// The two-storey house with two of its eight nodes going silent for minutes now and
    /// then (`SimulationSettings.outages`).
    public static let houseOutages: FloorPlan = {
        var plan = house
        plan.name = "house-outages"
        plan.silentNodes = 2
        return plan
    }()

    /// Floors in use, ascending.
    public var floors: [Int] { Array(Set(rooms.map(\.floor))).sorted() }

    public func room(_ name: String) -> ScenarioLayout.Room? { rooms.first { $0.name == name } }

    /// The way out from `p` in the exit room: the nearest point of an outer wall of the exit
    /// room (a side it shares with the outline of its floor's rooms taken together), and a
    /// point `distance` metres beyond it. Nil when the exit room has no outer wall.
    func wayOut(from p: Point, distance: Double = 8) -> (door: Point, outside: Point)? {
        guard let exit = room(exit), let e = Geometry.bounds(exit.outline),
              let b = Geometry.bounds(rooms.filter { $0.floor == exit.floor }.flatMap(\.outline)) else { return nil }
        let eps = 1e-6
        var best: (door: Point, outside: Point, d: Double)?
        func consider(_ door: Point, _ outward: (x: Double, y: Double)) {
            let d = door.distance(to: p)
            if best == nil || d < best!.d {
                best = (door, Point(door.x + outward.x * distance, door.y + outward.y * distance), d)
            }
        }
        let x = min(max(p.x, e.x0), e.x1), y = min(max(p.y, e.y0), e.y1)
        if abs(e.x0 - b.x0) < eps { consider(Point(e.x0, y), (-1, 0)) }
        if abs(e.x1 - b.x1) < eps { consider(Point(e.x1, y), (1, 0)) }
        if abs(e.y0 - b.y0) < eps { consider(Point(x, e.y0), (0, -1)) }
        if abs(e.y1 - b.y1) < eps { consider(Point(x, e.y1), (0, 1)) }
        return best.map { ($0.door, $0.outside) }
    }

    /// Wall segments per floor: every room edge, with edges shared by two rooms kept once,
    /// except where two zones of one open plan (`ScenarioLayout.Room.openPlan`) meet.
    public func walls() -> [Int: [(Point, Point)]] {
        var out: [Int: [(Point, Point)]] = [:]
        for floor in floors {
            var seen = Set<[Double]>()
            var list: [(Point, Point)] = []
            let zones = rooms.filter { $0.floor == floor && $0.openPlan != nil }
            for r in rooms where r.floor == floor {
                let o = r.outline
                for i in 0..<o.count {
                    let a = o[i], b = o[(i + 1) % o.count]
                    if let plan = r.openPlan,
                       zones.contains(where: { $0.name != r.name && $0.openPlan == plan && Self.lies(a, b, alongOutlineOf: $0) }) { continue }
                    // Canonical key (rounded to cm) so the neighbour's copy of the edge is dropped.
                    let k1 = [a.x, a.y, b.x, b.y].map { ($0 * 100).rounded() }
                    let k2 = [b.x, b.y, a.x, a.y].map { ($0 * 100).rounded() }
                    if seen.contains(k1) || seen.contains(k2) { continue }
                    seen.insert(k1)
                    list.append((a, b))
                }
            }
            out[floor] = list
        }
        return out
    }

    /// Whether the edge a–b lies along an edge of `room` (both ends on one of its sides,
    /// within a centimetre): where two zones meet rather than where a zone meets the outside.
    static func lies(_ a: Point, _ b: Point, alongOutlineOf room: ScenarioLayout.Room) -> Bool {
        let o = room.outline
        func near(_ p: Point, _ c: Point, _ d: Point) -> Bool {
            let (dx, dy) = (d.x - c.x, d.y - c.y)
            let len2 = dx * dx + dy * dy
            guard len2 > 0 else { return false }
            let u = min(max(((p.x - c.x) * dx + (p.y - c.y) * dy) / len2, 0), 1)
            return Point(c.x + u * dx, c.y + u * dy).distance(to: p) < 0.01
        }
        return o.indices.contains { i in
            let c = o[i], d = o[(i + 1) % o.count]
            return near(a, c, d) && near(b, c, d)
        }
    }
}
