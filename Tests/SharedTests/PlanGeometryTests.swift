@testable import Shared
import Testing

/// The one point-in-room rule the fusion grid, the config checks and the simulator's ground
/// truth share.
@Suite struct PlanGeometryTests {
    static func contains(_ polygon: [(x: Double, y: Double)], _ x: Double, _ y: Double) -> Bool {
        PlanGeometry.contains(x: x, y: y, count: polygon.count) { polygon[$0] }
    }

    @Test func anLShapedRoomHasItsCornerOutside() {
        // An L: 4 × 4 less its top-right 2 × 2, corners listed clockwise and counter-clockwise.
        let l: [(x: Double, y: Double)] = [(0, 0), (4, 0), (4, 2), (2, 2), (2, 4), (0, 4)]
        for polygon in [l, l.reversed()] {
            #expect(Self.contains(polygon, 1, 1) && Self.contains(polygon, 3, 1) && Self.contains(polygon, 1, 3))
            #expect(!Self.contains(polygon, 3, 3), "the missing corner")
            #expect(!Self.contains(polygon, -0.1, 1) && !Self.contains(polygon, 4.1, 1) && !Self.contains(polygon, 1, 4.1))
        }
        #expect(PlanGeometry.bounds(count: l.count) { l[$0] }! == (0, 0, 4, 4))
    }

    /// Half-open edges: a point on the boundary between two rooms that share a wall is in
    /// exactly one of them, so the simulator never puts a beacon in two rooms, or in none.
    @Test func aPointOnASharedWallIsInExactlyOneRoom() {
        let west: [(x: Double, y: Double)] = [(0, 0), (2, 0), (2, 3), (0, 3)]
        let east: [(x: Double, y: Double)] = [(2, 0), (5, 0), (5, 3), (2, 3)]
        for y in stride(from: 0.25, to: 3, by: 0.25) {
            #expect(Self.contains(west, 2, y) != Self.contains(east, 2, y), "at (2, \(y))")
        }
    }

    @Test func fewerThanThreeCornersEncloseNothing() {
        #expect(!Self.contains([], 0, 0))
        #expect(!Self.contains([(0, 0), (1, 1)], 0.5, 0.5))
        #expect(PlanGeometry.bounds(count: 0) { _ in (0, 0) } == nil)
    }
}
