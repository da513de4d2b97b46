import Foundation
import Shared

extension ScenarioSimulator {
    /// The `rx_adjust` per node that `aggregator calibrate` would find in this world: a beacon
    /// carried round each node at 1 m, at the node's height, wherever the room allows, its
    /// readings' median — the receiver's offset and the shadowing of those spots, not the
    /// packet noise. What a careful user gets by hand, to compare with the true offsets
    /// (`GeneratedScenario.receiverOffsets`) in the bench. One spot instead of the circle
    /// measured worse on sites of three and more nodes (check 0.910 against 0.916).
    public func oneMetreCalibration() -> [String: Double] {
        let world = makeWorld()
        var out: [String: Double] = [:]
        for (i, node) in world.nodes.enumerated() {
            let z = Double(node.floor) * settings.plan.floorHeight + node.z
            let room = world.layout.rooms.first { $0.name == node.room }
            var spots = (0..<16).map { k in
                Point(node.x + cos(Double(k) * .pi / 8), node.y + sin(Double(k) * .pi / 8))
            }.filter { room?.contains($0) ?? true }
            // A node in a corner narrower than 2 m: the one spot towards the room's middle.
            if spots.isEmpty, let outline = room?.outline, let (x0, y0, x1, y1) = Geometry.bounds(outline) {
                let cx = (x0 + x1) / 2 - node.x, cy = (y0 + y1) / 2 - node.y
                let length = max((cx * cx + cy * cy).squareRoot(), 0.01)
                spots = [Point(node.x + cx / length, node.y + cy / length)]
            }
            if spots.isEmpty { spots = [Point(node.x + 1, node.y)] }
            // Received from a 0 dBm (at 1 m) beacon; what it should read there is 0 dBm.
            let heard = spots.map { p in
                loss(at: p, floor: node.floor, node: node, walls: world.walls, height: node.z)
                    + (world.offsets[node.name] ?? 0) + world.fields[i].value(x: p.x, y: p.y, z: z)
            }.sorted()[spots.count / 2]
            out[node.name] = (-heard * 2).rounded() / 2
        }
        return out
    }
}
