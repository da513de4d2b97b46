import Foundation
import RoomcastSimulation
import Synchronization

/// Scenario fixtures of this test target (see Fixtures/README.md).
enum SimulationFixtures {
    struct Missing: Error, CustomStringConvertible {
        var description: String
    }

    /// The fixture directory `name` (e.g. "kolakowski-robot").
    static func directory(_ name: String) throws -> URL {
        guard let root = Bundle.module.url(forResource: "Fixtures", withExtension: nil) else {
            throw Missing(description: "Fixtures folder not in the test bundle")
        }
        return root.appendingPathComponent(name)
    }

    /// The scenario fixture `name`, loaded once per process (the calib set takes a moment).
    static func scenario(_ name: String) throws -> Scenario {
        if let s = cache.withLock({ $0[name] }) { return s }
        let s = try Scenario.load(from: directory(name))
        cache.withLock { $0[name] = s }
        return s
    }

    private static let cache = Mutex<[String: Scenario]>([:])

    /// The scenario fixture `name` with what its nodes' edge agents published (its gzipped
    /// captures through `edge-agent --dry-run`, in process), once per process. A recording kept
    /// as raw.jsonl alone (danis-still) gets its captures written first, as `roomcast-sim
    /// capture` writes them, in a copy of the fixture.
    static func run(_ name: String) async throws -> ScenarioRun {
        if let r = runs.withLock({ $0[name] }) { return r }
        let r = try await ScenarioRun.loadWritingCaptures(directory: directory(name))
        runs.withLock { $0[name] = r }
        return r
    }

    private static let runs = Mutex<[String: ScenarioRun]>([:])

    /// A smooth shadowing field (exp(−d²/2ℓ²), ℓ = 0.8 m) instead of the fitted default:
    /// the scenario-specific guards describe worlds drawn in it (a tag lying in a given
    /// spot, a given home's uncalibrated receivers), so they keep testing what they say.
    static func smoothShadowing(_ settings: inout SimulationSettings) {
        settings.radio.shadowingKernel = .gaussian
        settings.radio.shadowingDistance = 0.8
    }
}
