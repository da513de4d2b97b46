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

    public init(name: String, rooms: [ScenarioLayout.Room], exit: String, stairs: [String] = [],
                doubleNodes: Set<String> = []) {
        self.name = name
        self.rooms = rooms
        self.exit = exit
        self.stairs = stairs
        self.doubleNodes = doubleNodes
    }

    /// Names of the built-in plans.
    public static let names = ["house", "flat", "office", "cottage"]
    /// The plans the benchmark scores by default (every number in docs/fusion.md); the
    /// cottage, two rooms and two receivers, is asked for by name.
    public static let benchmarkNames = ["house", "flat", "office"]

    /// A built-in plan by name.
    public static func named(_ name: String) -> FloorPlan? {
        switch name {
        case "house": return house
        case "flat": return flat
        case "office": return office
        case "cottage": return cottage
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

    /// Wall segments per floor: every room edge, with edges shared by two rooms kept once.
    public func walls() -> [Int: [(Point, Point)]] {
        var out: [Int: [(Point, Point)]] = [:]
        for floor in floors {
            var seen = Set<[Double]>()
            var list: [(Point, Point)] = []
            for r in rooms where r.floor == floor {
                let o = r.outline
                for i in 0..<o.count {
                    let a = o[i], b = o[(i + 1) % o.count]
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
}
