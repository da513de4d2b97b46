import Foundation

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
        let dx = x1 - x0, dy = y1 - y0
        let length2 = dx * dx + dy * dy
        let t = length2 > 0 ? min(max(((x - x0) * dx + (y - y0) * dy) / length2, 0), 1) : 0
        let ex = x0 + t * dx - x, ey = y0 + t * dy - y
        return (ex * ex + ey * ey).squareRoot()
    }
}
