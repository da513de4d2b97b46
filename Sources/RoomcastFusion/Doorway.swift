import Shared

/// An open stretch of a room's wall, from one point to another (metres, on the room's floor).
struct Doorway: Sendable, Equatable {
    var x0: Double, y0: Double, x1: Double, y1: Double

    /// How far from a doorway a line may pass from one room's space into the next and still
    /// go through it. Walls are drawn as gaps between the outlines up to about half a metre
    /// wide, and the doorway on either room's outline: the crossing lies in the gap, up to
    /// half its width from the doorway, plus a step of the raster that finds it.
    static let reach = 0.3

    /// The distance from (x, y) to the nearest point of the doorway.
    func distance(toX x: Double, y: Double) -> Double {
        PlanGeometry.distance(fromX: x, y: y, toSegmentFromX: x0, y0: y0, toX: x1, y1: y1)
    }
}
