import Foundation
import Testing
import RoomcastFusion
import RoomcastSimulation
import Shared
import TestSupport

/// The fusion engine on the real recordings, through the product's path (each
/// node's capture through `edge-agent --dry-run`, the readings through the aggregator core
/// with the default config; docs/simulator.md, Evaluation), beside the baselines fed the
/// same readings. The numbers are in docs/results.md.
@Suite struct RealDataEvaluationTests {
    struct Goal: Sendable, CustomStringConvertible {
        var scenario: String
        /// Lowest settled accuracy accepted: as measured on this path (docs/results.md), less
        /// a small margin, so a regression shows.
        var accuracy: Double
        /// Most flaps per hour accepted, likewise measured.
        var flapsPerHour: Double
        /// More often right than every baseline on the same readings, with no more flaps.
        var beatsBaselines = true
        /// Node positions and room polygons in the site; false: rooms and node membership only.
        var positions = true
        var description: String { positions ? scenario : "\(scenario), membership only" }
    }

    static let goals = [
        // With positions, the flat's three doorways in its layout (measured robot 1.000 / 0,
        // calib 0.970 / 5.2: 2 flaps in 23 minutes).
        Goal(scenario: "kolakowski-robot", accuracy: 0.99, flapsPerHour: 0),
        Goal(scenario: "kolakowski-calib", accuracy: 0.965, flapsPerHour: 6),
        // The default mode, membership only (measured robot 0.968 / 0, calib 0.965 / 5.2).
        Goal(scenario: "kolakowski-robot", accuracy: 0.96, flapsPerHour: 0, positions: false),
        Goal(scenario: "kolakowski-calib", accuracy: 0.955, flapsPerHour: 6, positions: false),
        // The Daniş open-plan office, its zones one open plan (measured 0.969 / 0; membership
        // 0.966 / 0).
        Goal(scenario: "danis-office", accuracy: 0.96, flapsPerHour: 1),
        Goal(scenario: "danis-office", accuracy: 0.96, flapsPerHour: 1, positions: false),
        // Still beacons, 7 h at 42 spots of the same office (measured 0.916 / 0 with positions,
        // 0.889 / 0.2 with membership, where a still beacon's spot counts once; Bermuda-style
        // 0.861 / 33).
        Goal(scenario: "danis-still", accuracy: 0.9, flapsPerHour: 0.5),
        Goal(scenario: "danis-still", accuracy: 0.88, flapsPerHour: 0.5, positions: false),
    ]

    @Test(arguments: goals)
    func fusionHoldsItsMeasuredFigures(_ goal: Goal) async throws {
        let run = try await SimulationFixtures.run(goal.scenario)
        let (score, baselines) = try await offPool {
            (try run.roomcast(positions: goal.positions).score, try Baselines.all.map { ($0.name, try run.baseline($0).score) })
        }
        #expect(score.settledAccuracy >= goal.accuracy, "\(goal): \(score.summary)")
        #expect(score.flapsPerHour <= goal.flapsPerHour, "\(goal): \(score.summary)")
        for (name, b) in baselines where goal.beatsBaselines {
            #expect(score.settledAccuracy > b.settledAccuracy, "\(name): \(b.summary) vs \(score.summary)")
            #expect(score.flapsPerHour <= b.flapsPerHour, "\(name): \(b.summary) vs \(score.summary)")
        }
    }

    /// Positions on `run` as its layout says, and with `forget` applied to every room of it:
    /// the site told something of its walls, and told nothing of it.
    static func positionsToldAndUntold(_ run: ScenarioRun, forget: (inout ScenarioLayout.Room) -> Void)
        async throws -> (told: Score, untold: Score) {
        var forgotten = run
        for i in forgotten.scenario.layout.rooms.indices { forget(&forgotten.scenario.layout.rooms[i]) }
        let untold = forgotten
        return try await offPool { (try run.roomcast(positions: true).score, try untold.roomcast(positions: true).score) }
    }

    /// The Daniş office's zones are one open plan, as its fixture's layout says (what its site
    /// config would say: `rooms[].open_plan`), so positions count no wall where they meet.
    /// Told nothing, the geometry puts a wall on every split line and is right less often.
    @Test func zonesOfTheOpenPlanOfficeMeetWithoutWalls() async throws {
        let run = try await SimulationFixtures.run("danis-office")
        #expect(run.scenario.layout.rooms.allSatisfy { $0.openPlan == "office" })
        let (open, assumed) = try await Self.positionsToldAndUntold(run) { $0.openPlan = nil }
        #expect(open.settledAccuracy >= assumed.settledAccuracy + 0.02, "open plan \(open.summary), walls assumed \(assumed.summary)")
        #expect(open.flapsPerHour <= assumed.flapsPerHour, "open plan \(open.summary), walls assumed \(assumed.summary)")
    }

    /// The Kolakowski flat's layout gives its three doorways (the west room's door, the
    /// opening from the south hall into the main room, the south-east room's door; what its
    /// site config would say: `rooms[].doorways`), so positions count no wall where a line
    /// passes through one. With a wall all along every room instead, the geometry is right
    /// less often on both recordings and changes room at least as often.
    @Test func theFlatsDoorwaysOpenItsWalls() async throws {
        for name in ["kolakowski-calib", "kolakowski-robot"] {
            let run = try await SimulationFixtures.run(name)
            #expect(run.scenario.layout.rooms.reduce(0) { $0 + ($1.doorways?.count ?? 0) } == 3)
            let (open, walled) = try await Self.positionsToldAndUntold(run) { $0.doorways = nil }
            #expect(open.settledAccuracy >= walled.settledAccuracy + 0.01, "\(name): doorways \(open.summary), walls all round \(walled.summary)")
            #expect(open.flapsPerHour <= walled.flapsPerHour, "\(name): doorways \(open.summary), walls all round \(walled.summary)")
        }
    }
}
