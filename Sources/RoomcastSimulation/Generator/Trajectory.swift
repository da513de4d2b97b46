import Shared
/// Where one transmitter is over time: straight legs at walking speed, stays, and
/// spells away from the building. Times are seconds from the scenario start.
public struct Trajectory: Sendable, Equatable {
    /// One piece of movement; `present == false` means outside the building.
    public struct Leg: Sendable, Equatable {
        public var t0: Double
        public var t1: Double
        public var from: Point
        public var to: Point
        public var floor: Int
        public var present: Bool
        /// Present (heard) but outside the building: walking away after leaving, where the
        /// truth is already away (`SimulationSettings.walkOut`).
        public var outside = false
    }

    public private(set) var legs: [Leg] = []

    public init(legs: [Leg]) { self.legs = legs }

    /// A transmitter that never moves.
    public static func fixed(at p: Point, floor: Int, duration: Double) -> Trajectory {
        Trajectory(legs: [Leg(t0: 0, t1: duration, from: p, to: p, floor: floor, present: true)])
    }

    /// Position and floor at `t`, nil while away (or outside the legs).
    public func position(at t: Double) -> (point: Point, floor: Int)? {
        guard let leg = leg(at: t), leg.present else { return nil }
        let span = leg.t1 - leg.t0
        let f = span > 0 ? min(max((t - leg.t0) / span, 0), 1) : 1
        return (Point(leg.from.x + (leg.to.x - leg.from.x) * f, leg.from.y + (leg.to.y - leg.from.y) * f), leg.floor)
    }

    /// Position and floor at `t` while in the building: nil while away, and while outside
    /// but still heard (walking away, `SimulationSettings.walkOut`) — where truth, bound
    /// and ceilings say away.
    public func indoorPosition(at t: Double) -> (point: Point, floor: Int)? {
        guard let leg = leg(at: t), !leg.outside else { return nil }
        return position(at: t)
    }

    func leg(at t: Double) -> Leg? {
        var lo = 0, hi = legs.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if legs[mid].t1 <= t { lo = mid + 1 } else { hi = mid }
        }
        guard lo < legs.count, legs[lo].t0 <= t else { return nil }
        return legs[lo]
    }

    /// A walking person's day: stays in rooms, walks between them (by the stairs when
    /// the floor changes), sometimes leaves the building through `plan.exit`.
    /// With `walkOut`, someone leaving walks on through the exit room's outer wall and 8 m
    /// beyond, heard as they go, instead of vanishing where they stood; the walk comes out
    /// of the time away, so every later leg is the same either way (and so are the draws).
    static func walker(plan: FloorPlan, duration: Double, rng: inout SeededRandom,
                       meanStay: Double = 90, leaveProbability: Double = 0.12, walkOut: Bool = false) -> Trajectory {
        let start = plan.rooms[rng.index(plan.rooms.count)]
        var route = Route(plan: plan, room: start, at: randomPoint(in: start, rng: &rng), speed: rng.uniform(0.8, 1.3))

        while route.t < duration {
            route.stay(max(15, rng.exponential(mean: meanStay)))
            if rng.chance(leaveProbability), let exit = plan.room(plan.exit) {
                route.go(to: exit, rng: &rng)
                let away = rng.uniform(60, 400)
                let back = route.t + away, inside = route.pos
                if walkOut, let way = plan.wayOut(from: route.pos) {
                    // Out through the door and on, heard as the signal fades (the truth is
                    // away from the door on), within the time away. They come back where
                    // they left from, as without the walk: heard approaching, they would
                    // be counted as arriving before the truth has them in.
                    route.walk(to: way.door)
                    route.walk(to: way.outside, outside: true)
                }
                route.legs.append(Leg(t0: route.t, t1: max(route.t, back), from: route.pos, to: route.pos, floor: route.floor,
                                      present: false))
                // Later legs start where and when they would have without the walk.
                route.pos = inside
                route.t = max(route.t, back)
                route.stay(3)
                continue
            }
            let others = plan.rooms.filter { $0.name != route.room.name }
            guard !others.isEmpty else { continue }
            route.go(to: others[rng.index(others.count)], rng: &rng)
        }
        return Trajectory(legs: route.legs)
    }

    /// Someone teaching the rooms (`aggregator learn --seconds 30` in each) as README step 9
    /// says: every room of the plan in turn, floor by floor, `seconds` in each spent walking
    /// from one random point of it to the next, then staying in the last room until `duration`.
    static func teachingTour(plan: FloorPlan, duration: Double, rng: inout SeededRandom,
                             seconds: Double = 30) -> Trajectory {
        let rooms = plan.rooms.enumerated().sorted { ($0.element.floor, $0.offset) < ($1.element.floor, $1.offset) }.map(\.element)
        guard let first = rooms.first else { return Trajectory(legs: []) }
        var route = Route(plan: plan, room: first, at: randomPoint(in: first, rng: &rng), speed: rng.uniform(0.8, 1.3))
        route.stay(5)
        for room in rooms {
            if room.name != route.room.name { route.go(to: room, rng: &rng) }
            let arrived = route.t
            while route.t < arrived + seconds { route.walk(to: randomPoint(in: room, rng: &rng)) }
        }
        route.stay(max(duration - route.t, 1))
        return Trajectory(legs: route.legs)
    }

    /// Legs laid one after another from a starting room, at one walking speed.
    struct Route {
        let plan: FloorPlan
        var room: ScenarioLayout.Room
        var pos: Point
        var floor: Int
        let speed: Double
        var t = 0.0
        var legs: [Leg] = []

        init(plan: FloorPlan, room: ScenarioLayout.Room, at pos: Point, speed: Double) {
            self.plan = plan
            self.room = room
            self.pos = pos
            self.floor = room.floor
            self.speed = speed
        }

        mutating func stay(_ seconds: Double) {
            legs.append(Leg(t0: t, t1: t + seconds, from: pos, to: pos, floor: floor, present: true))
            t += seconds
        }

        mutating func walk(to q: Point, outside: Bool = false) {
            let d = q.distance(to: pos)
            let seconds = max(d / speed, 0.5)
            legs.append(Leg(t0: t, t1: t + seconds, from: pos, to: q, floor: floor, present: true, outside: outside))
            t += seconds
            pos = q
        }

        /// To a random point of `target`, by the stairs when the floor changes.
        mutating func go(to target: ScenarioLayout.Room, rng: inout SeededRandom) {
            if target.floor != floor, let here = plan.stairs.compactMap(plan.room).first(where: { $0.floor == floor }),
               let there = plan.stairs.compactMap(plan.room).first(where: { $0.floor == target.floor }) {
                walk(to: randomPoint(in: here, rng: &rng))
                // Climbing: a few seconds on the stairs, then on the other floor.
                stay(2)
                floor = there.floor
                pos = randomPoint(in: there, rng: &rng)
                stay(2)
            }
            floor = target.floor
            walk(to: randomPoint(in: target, rng: &rng))
            room = target
        }
    }

    /// A uniformly random point of `room`, at least `margin` metres from its walls
    /// (rejection sampling in the bounding box; falls back to the centre).
    static func randomPoint(in room: ScenarioLayout.Room, rng: inout SeededRandom, margin: Double = 0.4) -> Point {
        let o = room.outline
        guard let b = Geometry.bounds(o) else { return Point(0, 0) }
        for _ in 0..<100 {
            let p = Point(rng.uniform(b.x0 + margin, b.x1 - margin), rng.uniform(b.y0 + margin, b.y1 - margin))
            let probes = [p, Point(p.x - margin, p.y), Point(p.x + margin, p.y), Point(p.x, p.y - margin),
                          Point(p.x, p.y + margin)]
            if probes.allSatisfy(room.contains) { return p }
        }
        return Geometry.centre(o)
    }
}
