import Foundation
import Testing
import RoomcastFusion
import RoomcastSimulation
import Shared
import TestSupport

@Suite("Fingerprints on simulated homes without positions")
struct FingerprintScenarioTests {
    /// A simulated home (nodes off-centre, receivers up to 3 dB off, every node advertising)
    /// scored without positions or polygons, under `fusion` settings; replayed off the
    /// cooperative pool (`offPool`).
    static func scoreWithoutPositions(_ plan: FloorPlan, seed: UInt64, model: FusionModel = .standard,
                                      _ change: @escaping @Sendable (inout FusionSettings) -> Void) async throws -> Score {
        var settings = SimulationSettings(plan: plan, seed: seed, duration: 600)
        settings.nodeBeacons = true
        SimulationFixtures.smoothShadowing(&settings)
        let run = try await ScenarioRun.generated(ScenarioSimulator(settings: settings).run())
        var fusion = FusionSettings()
        change(&fusion)
        let (result, engine) = try await offPool { [fusion] in try run.fusionWithEngine(fusion, model: model, positions: false) }
        #expect(!engine.usesGeometry)
        return result.score
    }

    @Test("on a simulated flat without positions, fingerprints put right what uncalibrated receivers got wrong")
    func simulatedFlat() async throws {
        let with = try await Self.scoreWithoutPositions(.flat, seed: 1003) { _ in }
        let without = try await Self.scoreWithoutPositions(.flat, seed: 1003) { $0.fingerprints = false }
        #expect(with.settledAccuracy > without.settledAccuracy + 0.2, "\(with.summary) vs \(without.summary)")
        #expect(with.flapsPerHour <= without.flapsPerHour, "\(with.summary) vs \(without.summary)")
    }

    @Test("a room whose own node hears the beacon faintly does not win on its pattern alone")
    func ownNodeCheck() async throws {
        // Tune office 2: without the check, beacons along the open plan match the pattern of
        // a node they are far from (0.56 settled against 0.71 with it).
        let with = try await Self.scoreWithoutPositions(.office, seed: 2) { _ in }
        var unchecked = FusionModel()
        unchecked.fingerprintOwnSigma = 0
        let without = try await Self.scoreWithoutPositions(.office, seed: 2, model: unchecked) { _ in }
        #expect(with.settledAccuracy > without.settledAccuracy + 0.1, "\(with.summary) vs \(without.summary)")
    }
}
