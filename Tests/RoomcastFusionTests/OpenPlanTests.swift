import Foundation
import Testing
@testable import RoomcastFusion
import Shared

/// Walls stand between spaces: a room with walls is a space of its own, and the zones of one
/// open plan (`rooms[].open_plan`) share one, so positions count no wall where they meet.
@Suite struct OpenPlanTests {
    /// Three 4 × 4 m rooms in a row on one floor, a | b | c, each in the space given.
    static func raster(spaces: [Int]) throws -> FloorRaster {
        let outlines = (0..<3).map { r in
            let x0 = Double(4 * r), x1 = Double(4 * r + 4)
            return SiteGeometry.Outline(room: r, space: spaces[r], floor: 0,
                                        points: [(x0, 0), (x1, 0), (x1, 4), (x0, 4)])
        }
        return try #require(FloorRaster.build(outlines: outlines, resolution: 0.1)[0])
    }

    @Test func wallsStandBetweenSpacesNotBetweenZones() throws {
        let walled = try Self.raster(spaces: [0, 1, 2])
        #expect(walled.walls(fromX: 2, fromY: 2, toX: 6, toY: 2) == 1)
        #expect(walled.walls(fromX: 2, fromY: 2, toX: 10, toY: 2) == 2)
        // a and b are zones of one open plan; c has walls.
        let open = try Self.raster(spaces: [0, 0, 2])
        #expect(open.walls(fromX: 2, fromY: 2, toX: 6, toY: 2) == 0)
        #expect(open.walls(fromX: 2, fromY: 2, toX: 10, toY: 2) == 1)
        // Zones of one open plan either side of a walled room: out through one wall, in through another.
        let around = try Self.raster(spaces: [0, 1, 0])
        #expect(around.walls(fromX: 2, fromY: 2, toX: 10, toY: 2) == 2)
    }

    /// Two rooms sharing the wall x = 5, a node in each.
    static func site(openPlan: String?) -> SiteModel {
        SiteModel(
            rooms: [.init(name: "left", polygon: [[0, 0], [5, 0], [5, 4], [0, 4]], openPlan: openPlan),
                    .init(name: "right", polygon: [[5, 0], [10, 0], [10, 4], [5, 4]], openPlan: openPlan)],
            nodes: [.init(name: "l1", room: "left", position: [1, 2, 2]),
                    .init(name: "r1", room: "right", position: [9, 2, 2])])
    }

    @Test func theEngineTakesOpenPlansFromTheSite() throws {
        let settings = FusionSettings()
        let open = try #require(FusionEngine(site: Self.site(openPlan: "office"), settings: settings).geometry)
        let walled = try #require(FusionEngine(site: Self.site(openPlan: nil), settings: settings).geometry)
        let freeSpace = 10 * settings.pathLossExponent * log10(8.0)
        #expect(abs(open.link(from: 0, to: 1).loss - freeSpace) < 1e-9)
        #expect(abs(walled.link(from: 0, to: 1).loss - (freeSpace + settings.wallLoss)) < 1e-9)
        // A cell of the right room as heard from l1: the same difference.
        let cell = try #require((open.roomStart[1]..<open.roomEnd[1]).first)
        let column = open.columnOfNode[0]
        #expect(abs(open.expected(column: column, cell: cell) - walled.expected(column: column, cell: cell)
                    - settings.wallLoss) < 1e-3)
        // The start-up log says so.
        #expect(FusionEngine(site: Self.site(openPlan: "office"), settings: settings).modeSummary
                == "positions and room polygons, open plan 'office'")
        #expect(FusionEngine(site: Self.site(openPlan: nil), settings: settings).modeSummary == "positions and room polygons")
    }
}
