/// Geometry in a floor's plan (metres), shared by the site's config checks, the fusion's
/// position grid and the simulator, so that all of them measure a doorway against an outline,
/// and put a point in a room, alike: the simulator's ground truth is the fusion's rule.
public enum PlanGeometry {
    /// Whether (x, y) is inside the polygon of `count` vertices (`vertex(i)` each), by the
    /// even–odd rule: a room drawn with its corners in either order, convex or not. Fewer than
    /// three vertices enclose nothing.
    @inline(__always)
    public static func contains(x px: Double, y py: Double, count: Int, vertex: (Int) -> (x: Double, y: Double)) -> Bool {
        guard count >= 3 else { return false }
        var inside = false
        var j = count - 1
        for i in 0..<count {
            let a = vertex(i), b = vertex(j)
            if (a.y > py) != (b.y > py) {
                let xCross = a.x + (py - a.y) / (b.y - a.y) * (b.x - a.x)
                if px < xCross { inside.toggle() }
            }
            j = i
        }
        return inside
    }

    /// The axis-aligned bounds of `count` vertices; nil for none.
    public static func bounds(count: Int, vertex: (Int) -> (x: Double, y: Double)) -> (x0: Double, y0: Double, x1: Double, y1: Double)? {
        guard count > 0 else { return nil }
        let first = vertex(0)
        var b = (x0: first.x, y0: first.y, x1: first.x, y1: first.y)
        for i in 1..<count {
            let p = vertex(i)
            b = (min(b.x0, p.x), min(b.y0, p.y), max(b.x1, p.x), max(b.y1, p.y))
        }
        return b
    }

    /// The distance from (x, y) to the nearest point of the segment from (x0, y0) to (x1, y1);
    /// a segment of no length is its one point.
    public static func distance(fromX x: Double, y: Double,
                                toSegmentFromX x0: Double, y0: Double, toX x1: Double, y1: Double) -> Double {
        let dx = x1 - x0, dy = y1 - y0
        let length2 = dx * dx + dy * dy
        let t = length2 > 0 ? min(max(((x - x0) * dx + (y - y0) * dy) / length2, 0), 1) : 0
        let ex = x0 + t * dx - x, ey = y0 + t * dy - y
        return (ex * ex + ey * ey).squareRoot()
    }
}
