import Foundation
import Testing
@testable import RoomcastFusion
import Shared

/// A doorway (`rooms[].doorways`) is an open stretch of a room's wall: positions count no wall
/// where a line passes through it, and count the wall everywhere else along it.
@Suite struct DoorwayTests {
    /// Two 4 × 4 m rooms sharing the wall x = 4, the left one with the doorways given, drawn
    /// on its outline.
    static func raster(doorways: [Doorway], gap: Double = 0) throws -> FloorRaster {
        let left = SiteGeometry.Outline(room: 0, space: 0, floor: 0, points: [(0, 0), (4, 0), (4, 4), (0, 4)],
                                        doorways: doorways)
        let right = SiteGeometry.Outline(room: 1, space: 1, floor: 0,
                                         points: [(4 + gap, 0), (8, 0), (8, 4), (4 + gap, 4)])
        return try #require(FloorRaster.build(outlines: [left, right], resolution: 0.1)[0])
    }

    static let door = Doorway(x0: 4, y0: 1, x1: 4, y1: 2)

    @Test func aLineThroughTheDoorwayCrossesNoWall() throws {
        let walled = try Self.raster(doorways: [])
        #expect(walled.walls(fromX: 2, fromY: 1.5, toX: 6, toY: 1.5) == 1)
        let open = try Self.raster(doorways: [Self.door])
        #expect(open.walls(fromX: 2, fromY: 1.5, toX: 6, toY: 1.5) == 0)
        // Slanting through the doorway's ends, and beside it through the wall.
        #expect(open.walls(fromX: 2, fromY: 0.5, toX: 6, toY: 2.5) == 0)
        #expect(open.walls(fromX: 2, fromY: 3, toX: 6, toY: 3) == 1)
        #expect(open.walls(fromX: 2, fromY: 0.2, toX: 6, toY: 0.2) == 1)
        // Out through the doorway and back in through the wall.
        #expect(open.walls(fromX: 2, fromY: 1.5, toX: 6, toY: 1.5) + open.walls(fromX: 6, fromY: 1.5, toX: 2, toY: 3.5) == 1)
    }

    @Test func aWallDrawnAsAGapStillHasItsDoorway() throws {
        // The right room's outline starts 0.3 m on, beyond a wall that thick.
        let walled = try Self.raster(doorways: [], gap: 0.3)
        #expect(walled.walls(fromX: 2, fromY: 1.5, toX: 6, toY: 1.5) == 1)
        let open = try Self.raster(doorways: [Self.door], gap: 0.3)
        #expect(open.walls(fromX: 2, fromY: 1.5, toX: 6, toY: 1.5) == 0)
        #expect(open.walls(fromX: 2, fromY: 3, toX: 6, toY: 3) == 1)
    }

    /// The two rooms of `raster` as a site, a node in each, the doorway on the left room.
    static func site(doorways: [[[Double]]]?) -> SiteModel {
        SiteModel(
            rooms: [.init(name: "left", polygon: [[0, 0], [4, 0], [4, 4], [0, 4]], doorways: doorways),
                    .init(name: "right", polygon: [[4, 0], [8, 0], [8, 4], [4, 4]])],
            nodes: [.init(name: "l1", room: "left", position: [1, 1.5, 1]),
                    .init(name: "r1", room: "right", position: [7, 1.5, 1]),
                    .init(name: "r2", room: "right", position: [7, 3.5, 1])])
    }

    @Test func theEngineTakesDoorwaysFromTheSite() throws {
        let settings = FusionSettings()
        let open = try #require(FusionEngine(site: Self.site(doorways: [[[4, 1], [4, 2]]]), settings: settings).geometry)
        let walled = try #require(FusionEngine(site: Self.site(doorways: nil), settings: settings).geometry)
        // l1 → r1 passes through the doorway; l1 → r2 through the wall beside it.
        let through = 10 * settings.pathLossExponent * log10(6.0)
        #expect(abs(open.link(from: 0, to: 1).loss - through) < 1e-9)
        #expect(abs(walled.link(from: 0, to: 1).loss - (through + settings.wallLoss)) < 1e-9)
        let beside = 10 * settings.pathLossExponent * log10((36.0 + 4.0).squareRoot())
        #expect(abs(open.link(from: 0, to: 2).loss - (beside + settings.wallLoss)) < 1e-9)
        // The start-up log counts them.
        #expect(FusionEngine(site: Self.site(doorways: [[[4, 1], [4, 2]]]), settings: settings).modeSummary
                == "positions and room polygons, 1 doorway")
    }
}
