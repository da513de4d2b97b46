import Foundation
import RoomcastAdvertising
import Shared

/// What the radio itself allows, before any filter: each second, rooms decided from the
/// signals a tag standing on that spot would give *after infinite averaging* — noise-free
/// path loss, walls and floors plus the spot's slow shadowing, with perfectly calibrated
/// receivers (no offsets), no drift and no fading.
///
/// Why: the nearest-node bound (`GeneratedScenario.bound`) leaves shadowing out, so it
/// never pays for a spot that reads a few dB high at the wrong receiver. A tag that stays
/// on such a spot is misplaced by every estimator that only listens, however long it
/// waits; these ceilings measure how much of the gap to the bound that explains.
public struct SimulationCeilings: Sendable {
    /// The room of the receiver with the strongest shadowed mean signal.
    public var nearest: DecisionTimeline
    /// The room of the most likely position given every receiver's shadowed mean signal
    /// under the exact radio model (known walls, floors and path-loss exponent; the tag's
    /// 1 m power fitted, as no estimator knows it): least squares over a 0.2 m grid of the
    /// rooms, receivers below the sensitivity counted as "too weak to hear".
    public var position: DecisionTimeline
}

extension ScenarioSimulator {
    /// Computes the ceilings for the scenario `run()` generates (same settings, same world).
    public func ceilings(gridStep: Double = 0.2) -> SimulationCeilings {
        let s = settings, world = makeWorld()
        let nodes = world.nodes
        let grid = Self.grid(world.layout, step: gridStep)
        // Path loss with 0 dBm at 1 m, from every grid point to every node: the part of the
        // model that does not depend on the tag.
        let model: [[Double]] = grid.map { g in
            nodes.map { node in loss(at: g.point, floor: g.floor, node: node, walls: world.walls) }
        }
        var nearest = DecisionTimeline(), position = DecisionTimeline()
        for tx in world.transmitters where tx.tracked {
            for k in stride(from: 1.0, through: s.duration, by: 1.0) {
                let t = s.t0 + k
                guard let (p, floor) = tx.trajectory.indoorPosition(at: k) else {
                    nearest.record(tx.beacon.id, room: nil, at: t)
                    position.record(tx.beacon.id, room: nil, at: t)
                    continue
                }
                let z = Double(floor) * s.plan.floorHeight + 1
                let heard: [Double] = nodes.indices.map { i in
                    tx.power + loss(at: p, floor: floor, node: nodes[i], walls: world.walls)
                        + world.fields[i].value(x: p.x, y: p.y, z: z)
                }
                // A silent node tells nothing, not even "too weak to hear".
                let up = nodes.indices.filter { world.hears($0, at: t) }
                let strongest = up.max { heard[$0] < heard[$1] }
                nearest.record(tx.beacon.id, room: strongest.flatMap { nodes[$0].room }, at: t)
                var best = (cost: Double.infinity, index: -1)
                for (g, row) in model.enumerated() {
                    // The tag's power is unknown to any estimator: fit it per cell.
                    var sum = 0.0, count = 0.0
                    for i in up where heard[i] >= s.radio.sensitivity {
                        sum += heard[i] - row[i]
                        count += 1
                    }
                    let power = count > 0 ? sum / count : tx.power
                    var cost = 0.0
                    for i in up {
                        let predicted = power + row[i]
                        if heard[i] >= s.radio.sensitivity {
                            cost += (heard[i] - predicted) * (heard[i] - predicted)
                        } else if predicted > s.radio.sensitivity {
                            cost += (predicted - s.radio.sensitivity) * (predicted - s.radio.sensitivity)
                        }
                        if cost >= best.cost { break }
                    }
                    if cost < best.cost { best = (cost, g) }
                }
                position.record(tx.beacon.id, room: best.index >= 0 ? grid[best.index].room : nil, at: t)
            }
        }
        return SimulationCeilings(nearest: nearest, position: position)
    }

    /// Points `step` apart inside the rooms, with the room each lies in.
    private static func grid(_ layout: ScenarioLayout, step: Double) -> [(point: Point, floor: Int, room: String)] {
        var out: [(point: Point, floor: Int, room: String)] = []
        for room in layout.rooms {
            guard let (x0, y0, x1, y1) = Geometry.bounds(room.outline) else { continue }
            var x = x0 + step / 2
            while x < x1 {
                var y = y0 + step / 2
                while y < y1 {
                    let p = Point(x, y)
                    if room.contains(p) { out.append((p, room.floor, room.name)) }
                    y += step
                }
                x += step
            }
        }
        return out
    }
}
