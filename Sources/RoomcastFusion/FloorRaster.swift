import Shared

/// A raster of spaces over one floor (`Outline.space`: a room with walls, or an open plan's
/// zones together), for counting the walls along a segment, and the floor's doorways, where
/// a segment passes from one space into the next without a wall.
struct FloorRaster {
    let x0: Double, y0: Double, step: Double
    let width: Int, height: Int
    let spaces: [Int32]   // -1 outside every room
    let doorways: [Doorway]

    static func build(outlines: [SiteGeometry.Outline], resolution: Double) -> [Int: FloorRaster] {
        var byFloor: [Int: [SiteGeometry.Outline]] = [:]
        for o in outlines { byFloor[o.floor, default: []].append(o) }
        var result: [Int: FloorRaster] = [:]
        for (floor, list) in byFloor {
            var x0 = Double.infinity, y0 = Double.infinity, x1 = -Double.infinity, y1 = -Double.infinity
            for o in list {
                let b = o.bounds
                x0 = min(x0, b.x0); y0 = min(y0, b.y0); x1 = max(x1, b.x1); y1 = max(y1, b.y1)
            }
            let step = max(resolution, 0.05)
            let w = max(1, Int(((x1 - x0) / step).rounded(.up)) + 1)
            let h = max(1, Int(((y1 - y0) / step).rounded(.up)) + 1)
            var spaces = [Int32](repeating: -1, count: w * h)
            for j in 0..<h {
                let y = y0 + (Double(j) + 0.5) * step
                for i in 0..<w {
                    let x = x0 + (Double(i) + 0.5) * step
                    for o in list where o.contains(x, y) { spaces[j * w + i] = Int32(o.space); break }
                }
            }
            result[floor] = FloorRaster(x0: x0, y0: y0, step: step, width: w, height: h, spaces: spaces,
                                        doorways: list.flatMap(\.doorways))
        }
        return result
    }

    /// The first and last of the `steps + 1` samples along the segment that can fall on the
    /// raster (nil: none does).
    func samplesOverRaster(fromX: Double, fromY: Double, dx: Double, dy: Double, steps: Int) -> (first: Int, last: Int)? {
        var t0 = 0.0, t1 = 1.0
        for (from, d, low, high) in [(fromX, dx, x0, x0 + Double(width) * step), (fromY, dy, y0, y0 + Double(height) * step)] {
            if d == 0 {
                if from < low || from > high { return nil }
            } else {
                let a = (low - from) / d, b = (high - from) / d
                t0 = max(t0, min(a, b))
                t1 = min(t1, max(a, b))
            }
        }
        guard t0 <= t1 else { return nil }
        // One sample of margin either side: rounding at the box's edge must not lose one.
        let first = max(0, Int((t0 * Double(steps)).rounded(.down)) - 1)
        let last = min(steps, Int((t1 * Double(steps)).rounded(.up)) + 1)
        return first <= last ? (first, last) : nil
    }

    func space(_ x: Double, _ y: Double) -> Int32 {
        let i = Int(((x - x0) / step).rounded(.down)), j = Int(((y - y0) / step).rounded(.down))
        guard i >= 0, j >= 0, i < width, j < height else { return -1 }
        return spaces[j * width + i]
    }

    /// The walls along the segment: how many times the space changes, ignoring gaps between
    /// polygons (a wall drawn as a gap counts once, not twice), and crossings through a
    /// doorway (where the segment leaves one space and enters the next within
    /// `Doorway.reach` of it).
    func walls(fromX: Double, fromY: Double, toX: Double, toY: Double) -> Int {
        let dx = toX - fromX, dy = toY - fromY
        let length = (dx * dx + dy * dy).squareRoot()
        let steps = max(1, Int((length / (step * 0.5)).rounded(.up)))
        var last: Int32 = -1
        var lastX = fromX, lastY = fromY
        var changes = 0
        // Only the part of the segment over the raster can cross a wall: a node placed far
        // outside the plan (positions in millimetres, polygons in metres) must not cost a
        // sample every few centimetres of kilometres.
        guard let span = samplesOverRaster(fromX: fromX, fromY: fromY, dx: dx, dy: dy, steps: steps) else { return 0 }
        for s in span.first...span.last {
            let t = Double(s) / Double(steps)
            let x = fromX + dx * t, y = fromY + dy * t
            let r = space(x, y)
            if r < 0 { continue }
            if last >= 0 && r != last && !throughDoorway(x: (x + lastX) / 2, y: (y + lastY) / 2) { changes += 1 }
            last = r
            lastX = x
            lastY = y
        }
        return changes
    }

    private func throughDoorway(x: Double, y: Double) -> Bool {
        doorways.contains { $0.distance(toX: x, y: y) <= Doorway.reach }
    }
}
