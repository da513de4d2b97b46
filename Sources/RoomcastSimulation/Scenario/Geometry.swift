import Shared

/// A point on a floor plan, metres.
public struct Point: Sendable, Equatable, Hashable {
    public var x: Double
    public var y: Double

    public init(_ x: Double, _ y: Double) {
        self.x = x
        self.y = y
    }

    /// Straight-line distance to `other`, metres.
    public func distance(to other: Point) -> Double {
        ((x - other.x) * (x - other.x) + (y - other.y) * (y - other.y)).squareRoot()
    }
}

/// Plane geometry for floor plans: point in polygon, segment crossing.
public enum Geometry {
    /// Even-odd point-in-polygon test: fusion's own (`PlanGeometry.contains`), so that the
    /// ground truth at a room's edge is what the engine's grid takes it for.
    public static func contains(_ polygon: [Point], _ p: Point) -> Bool {
        PlanGeometry.contains(x: p.x, y: p.y, count: polygon.count) { (polygon[$0].x, polygon[$0].y) }
    }

    /// Whether segments pq and ab cross properly (touching at an end does not count).
    public static func crosses(_ p: Point, _ q: Point, _ a: Point, _ b: Point) -> Bool {
        func orient(_ u: Point, _ v: Point, _ w: Point) -> Double {
            (v.x - u.x) * (w.y - u.y) - (v.y - u.y) * (w.x - u.x)
        }
        let d1 = orient(a, b, p), d2 = orient(a, b, q)
        let d3 = orient(p, q, a), d4 = orient(p, q, b)
        return ((d1 > 0 && d2 < 0) || (d1 < 0 && d2 > 0)) && ((d3 > 0 && d4 < 0) || (d3 < 0 && d4 > 0))
    }

    /// The axis-aligned bounding box of a polygon; nil when it has no points.
    public static func bounds(_ polygon: [Point]) -> (x0: Double, y0: Double, x1: Double, y1: Double)? {
        PlanGeometry.bounds(count: polygon.count) { (polygon[$0].x, polygon[$0].y) }
    }

    /// The centroid of a polygon's vertices (good enough for convex and L-shaped rooms).
    public static func centre(_ polygon: [Point]) -> Point {
        guard !polygon.isEmpty else { return Point(0, 0) }
        let n = Double(polygon.count)
        return Point(polygon.map(\.x).reduce(0, +) / n, polygon.map(\.y).reduce(0, +) / n)
    }
}
