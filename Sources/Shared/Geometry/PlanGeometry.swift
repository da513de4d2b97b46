/// Geometry in a floor's plan (metres), shared by the site's config checks and the fusion's
/// position grid, so that both measure a doorway against an outline alike.
public enum PlanGeometry {
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
