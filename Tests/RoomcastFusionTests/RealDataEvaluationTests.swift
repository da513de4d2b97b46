import Foundation
import Testing
import RoomcastFusion
import RoomcastSimulation
import Shared
import TestSupport

/// The fusion engine on the real Kolakowski recordings, through the same replay
/// and scorer as the baselines (docs/simulator.md), against the goal of the data
/// set's README: at most half the errors of the best simple rule, fewer flaps, a
/// faster switch. The numbers are in docs/fusion.md.
@Suite struct RealDataEvaluationTests {
    struct Goal: Sendable, CustomStringConvertible {
        var scenario: String
        /// Best simple rule's settled accuracy in the README (Bermuda-style).
        var reference: Double
        var referenceFlaps: Double
        var description: String { scenario }
    }

    static let goals = [
        Goal(scenario: "kolakowski-robot", reference: 0.965, referenceFlaps: 0),
        Goal(scenario: "kolakowski-calib", reference: 0.916, referenceFlaps: 16),
    ]

    @Test(arguments: goals)
    func fusionMeetsTheGoal(_ goal: Goal) async throws {
        let scenario = try SimulationFixtures.scenario(goal.scenario)
        let site = scenario.layout.siteModel()
        let engine = FusionEngine(site: site, settings: FusionSettings())
        #expect(engine.usesGeometry)
        let (score, baselines) = await offPool {
            (Evaluation.run(scenario: scenario, estimator: engine), Baselines.all.map { ($0.name, $0.run(scenario: scenario)) })
        }
        let errors = 1 - score.settledAccuracy
        #expect(errors <= (1 - goal.reference) / 2, "\(goal): \(score.summary)")
        #expect(score.flapsPerHour <= goal.referenceFlaps, "\(goal): \(score.summary)")
        let latency = try #require(score.medianSwitchLatency)
        // The README's latencies came from a replay that fed rules every packet; through
        // the agent's one-reading-per-second path every rule is slower, so the switch is
        // compared with Bermuda's on the same path (docs/fusion.md has both).
        let bermuda = try #require(baselines.first { $0.0 == "bermuda" }?.1)
        #expect(latency < (bermuda.medianSwitchLatency ?? .infinity), "\(goal): \(score.summary) vs \(bermuda.summary)")
        // And better than every baseline as the shared replay scores them.
        for (name, b) in baselines {
            #expect(score.settledAccuracy > b.settledAccuracy, "\(name): \(b.summary) vs \(score.summary)")
            #expect(score.flapsPerHour <= b.flapsPerHour, "\(name): \(b.summary) vs \(score.summary)")
        }
    }

    /// The robot drives at 0.07–0.09 m/s, too slowly for the motion gate: the creep test is
    /// what keeps the hold on still beacons from holding it in the room it has left.
    @Test func creepLetsTheRobotThroughTheHold() async throws {
        let scenario = try SimulationFixtures.scenario("kolakowski-calib")
        let site = scenario.layout.siteModel()
        var noCreep = FusionSettings()
        noCreep.creepThreshold = 0
        let (with, without) = await offPool { [noCreep] in
            (Evaluation.run(scenario: scenario, estimator: FusionEngine(site: site, settings: FusionSettings())),
             Evaluation.run(scenario: scenario, estimator: FusionEngine(site: site, settings: noCreep)))
        }
        #expect(with.settledAccuracy > without.settledAccuracy, "\(with.summary) vs \(without.summary) without")
    }
}
