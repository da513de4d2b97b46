import Foundation
import Testing
import RoomcastFusion
import RoomcastSimulation
import Shared

/// Parameter exploration: runs only when FUSION_TUNE names a file of settings (one
/// JSON object per line) and prints the score of each on the real recordings and
/// on simulated homes (FUSION_TUNE_SEEDS, default "1,2": `tune` split; use 1001…
/// for the `check` split).
@Suite struct TuningTests {
    @Test func tune() throws {
        let env = ProcessInfo.processInfo.environment
        guard let path = env["FUSION_TUNE"] else { return }
        var scenarios = try ["kolakowski-robot", "kolakowski-calib"].map { try SimulationFixtures.scenario($0) }
        let seeds = (env["FUSION_TUNE_SEEDS"] ?? "1,2").split(separator: ",").compactMap { UInt64($0) }
        let layouts = (env["FUSION_TUNE_LAYOUTS"] ?? "house,flat,office").split(separator: ",").map(String.init)
        let duration = Double(env["FUSION_TUNE_DURATION"] ?? "1800") ?? 1800
        for layout in layouts {
            for seed in seeds {
                var settings = SimulationSettings(plan: FloorPlan.named(layout)!, seed: seed, duration: duration)
                settings.radio = RadioModel(noise: .normal)
                var s = ScenarioSimulator(settings: settings).run().scenario
                s.name = "\(layout)-\(seed)"
                scenarios.append(s)
            }
        }
        let baselines = env["FUSION_TUNE_BASELINES"] != nil
        for line in try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n") where !line.isEmpty {
            let settings = try JSONDecoder().decode(FusionSettings.self, from: Data(line.utf8))
            var out = "\(line)\n"
            var sum = (acc: 0.0, flaps: 0.0, latency: 0.0, n: 0.0)
            for scenario in scenarios {
                let engine = FusionEngine(site: scenario.layout.siteModel(), settings: settings)
                let score = Evaluation.run(scenario: scenario, estimator: engine)
                out += "   \(scenario.name): \(score.summary)\n"
                if baselines {
                    for b in Baselines.all { out += "      \(b.name): \(b.run(scenario: scenario).summary)\n" }
                }
                if !scenario.name.hasPrefix("kolakowski") {
                    sum.acc += score.settledAccuracy; sum.flaps += score.flapsPerHour
                    sum.latency += score.medianSwitchLatency ?? 0; sum.n += 1
                }
            }
            if sum.n > 0 {
                out += String(format: "   simulated mean: accuracy %.3f, flaps/h %.1f, median switch %.1f s\n",
                              sum.acc / sum.n, sum.flaps / sum.n, sum.latency / sum.n)
            }
            print(out, terminator: "")
        }
    }
}
