import Foundation
import Testing
import RoomcastFusion
import RoomcastSimulation
import Shared
import TestSupport

/// The smallest site: two rooms, a node in each. A move shows on two links only, where
/// the motion gate's "every link but the one that parted most" is one link (stop 18).
@Suite struct TwoNodeSiteTests {
    /// A tag heard every `gap` s, `noise` dB a reading, shadowing drifting by `drift` dB
    /// (8 s), 3 dB nearer the kitchen; and, from `moveAt`, `kitchenMove`/`officeMove` dB.
    static func tagOnTwoLinks(_ settings: FusionSettings, seconds: Double, moveAt: Double = .infinity, gap: Double = 2,
                              noise: Double = 6, drift: Double = 3, kitchenMove: Double = -8, officeMove: Double = 13,
                              seed: UInt64) -> [(Double, PresenceDecision)] {
        var engine = FusionEngine(site: Synthetic.twoRooms, settings: settings)
        var rng = SeededRandom(seed: seed), synth = Synthetic()
        var shadow = ["n-kitchen": 0.0, "n-office": 0.0]
        var out: [(Double, PresenceDecision)] = []
        var t = 0.0
        let keep = exp(-gap / 8)
        while t < seconds {
            let moved = t >= moveAt
            for node in shadow.keys.sorted() {
                shadow[node]! = shadow[node]! * keep + rng.gaussian(sigma: drift * (1 - keep * keep).squareRoot())
                let mean = node == "n-kitchen" ? -72 + (moved ? kitchenMove : 0) : -75 + (moved ? officeMove : 0)
                engine.ingest(synth.reading(node, rssi: mean + shadow[node]! + rng.gaussian(sigma: noise), at: t, interval: gap), now: t)
            }
            for d in engine.tick(now: t + gap / 2) { out.append((t + gap / 2, d)) }
            t += gap
        }
        return out
    }

    @Test func aWalkBetweenTwoNodesIsFollowedAtTheMovingPace() throws {
        // Two nodes: a tag sat 3 dB nearer the kitchen's for five minutes, then walks to
        // where the office's hears it 10 dB louder and the kitchen's 6 dB fainter. With two
        // links "every link but the one that parted most" is one link, 6 dB: without the
        // swing test the gate stayed shut and the room followed only as the still record
        // gave way, a minute or more later.
        var off = FusionSettings()
        off.motionSwingThreshold = 0
        var followed: [Double] = [], late: [Double] = []
        var stillChanges = 0
        for seed in UInt64(21)...30 {
            for (settings, gated) in [(FusionSettings(), true), (off, false)] {
                let changes = Self.tagOnTwoLinks(settings, seconds: 400, moveAt: 300, gap: 1, noise: 2, drift: 2,
                                                 kitchenMove: -6, officeMove: 10, seed: seed)
                let hit = changes.first { $0.0 >= 300 && $0.1.room == "office" }.map { $0.0 - 300 } ?? 100
                if gated { followed.append(hit) } else { late.append(hit) }
            }
            // The same tag left where it sat, for an hour: drift on two links that happens
            // to go opposite ways must rarely pass for a walk.
            stillChanges += Self.tagOnTwoLinks(FusionSettings(), seconds: 3600, gap: 1, noise: 2, drift: 2, seed: seed)
                .filter { $0.0 > 30 }.count
        }
        // Noise can keep the two partings from lasting the second the swing test asks.
        #expect(followed.filter { $0 <= 3 }.count >= 8, "followed after \(followed) s")
        #expect(late.filter { $0 > 30 }.count >= 8, "without the swing test: \(late) s")
        #expect(stillChanges <= 10, "\(stillChanges) changes in ten still hours")
    }

    @Test func theSimulatedCottageFollowsMovesAndBeatsBermuda() async throws {
        // Tune seed 3 of the two-room cottage, 10 minutes: with the swing test the engine
        // switches within 5 s and is more often right than the Bermuda-style rule, with
        // fewer flaps; without it the median switch took 7.3 s.
        var settings = SimulationSettings(plan: .cottage, seed: 3, duration: 600)
        settings.radio = RadioModel(noise: .normal)
        let scenario = ScenarioSimulator(settings: settings).run().scenario
        let site = scenario.layout.siteModel()
        var settingsOff = FusionSettings()
        settingsOff.motionSwingThreshold = 0
        let off = settingsOff
        let (score, without, bermuda) = await offPool {
            (Evaluation.run(scenario: scenario, estimator: FusionEngine(site: site, settings: FusionSettings())),
             Evaluation.run(scenario: scenario, estimator: FusionEngine(site: site, settings: off)),
             Baselines.named("bermuda")!.run(scenario: scenario))
        }
        let latency = try #require(score.medianSwitchLatency)
        #expect(latency <= 5, "\(score.summary)")
        #expect(latency < (without.medianSwitchLatency ?? .infinity) - 1, "\(score.summary) vs \(without.summary) without")
        #expect(score.settledAccuracy > bermuda.settledAccuracy, "\(score.summary) vs \(bermuda.summary)")
        #expect(score.flapsPerHour < bermuda.flapsPerHour, "\(score.summary) vs \(bermuda.summary)")
    }
}
