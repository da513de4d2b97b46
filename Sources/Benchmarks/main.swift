import Foundation
import RoomcastFusion
import RoomcastSimulation
import Shared

// roomcast-bench: benchmarks that print numbers. Run a release build:
//   swift run -c release roomcast-bench <name> [options]
let benchmarks: [(name: String, summary: String, run: ([String]) throws -> Void)] = [
    ("hci", "HCI advertising-report decode and replay vs btmon", HCIBenchmark.run),
    ("advertising", "decode throughput per beacon format", AdvertisingBenchmark.run),
    ("agent", "edge-agent CPU and RSS replaying a busy capture (real time and max)", AgentBenchmark.run),
    ("crowd", "edge-agent peak RSS and beacon-table evictions with 300 k distinct advertisers", CrowdBenchmark.run),
    ("fusion", "fusion engine throughput and memory (beacons x nodes)", FusionBenchmark.run),
    ("simulation", "room accuracy of Roomcast's fusion beside the baselines on generated homes", { arguments in
        try SimulationBenchmark.run(arguments: arguments, contenders: [.roomcast] + experimentalContenders())
    }),
    ("aggregator", "readings/s, switch latency and memory through a real mosquitto", AggregatorBenchmark.run),
    ("radio", "each noise preset's spread over time beside the recordings (robot, stopped and moving)", RadioBenchmark.run),
    ("results", "the table docs/results.md carries: recordings and simulated homes beside the baselines", ResultsBenchmark.run),
    ("reference", "print the fusion settings reference that docs/configuration.md carries", { _ in
        print(FusionSettings.referenceMarkdown(), terminator: "")
    }),
]

let args = Array(CommandLine.arguments.dropFirst())
guard let name = args.first, let bench = benchmarks.first(where: { $0.name == name }) else {
    var usage = "USAGE: roomcast-bench <benchmark> [options]\n\nBENCHMARKS:\n"
    for b in benchmarks { usage += "  \(b.name.padding(toLength: 14, withPad: " ", startingAt: 0)) \(b.summary)\n" }
    FileHandle.standardError.write(Data(usage.utf8))
    exit(args.isEmpty || args.first == "--help" ? 0 : 64)
}
do {
    try bench.run(Array(args.dropFirst()))
} catch {
    FileHandle.standardError.write(Data("roomcast-bench: \(error)\n".utf8))
    exit(1)
}

/// `BENCH_FUSION='{"corroborate": true}'` adds a contender `roomcast-x` with those
/// fusion settings (JSON, the config file's keys): for trying a change side by side.
/// `BENCH_TRACE=SCENARIO/BEACON` traces its decisions for one beacon; `BENCH_OFFSETS`
/// prints the receiver offsets it learned beside the simulator's.
func experimentalContenders() -> [SimulationBenchmark.Contender] {
    let environment = ProcessInfo.processInfo.environment
    guard let json = environment["BENCH_FUSION"] else { return [] }
    let settings: FusionSettings
    do {
        settings = try JSONDecoder().decode(FusionSettings.self, from: Data(json.utf8))
    } catch {
        FileHandle.standardError.write(Data("BENCH_FUSION: \(error)\n".utf8))
        exit(64)
    }
    let trace = environment["BENCH_TRACE"]?.split(separator: "/", maxSplits: 1).map(String.init)
    let showOffsets = environment["BENCH_OFFSETS"] != nil
    return [.init(name: "roomcast-x") { run, config, generated in
        let engine = FusionEngine(site: config.partitionedSite, settings: settings)
        if let trace, trace.count == 2, trace[0] == run.scenario.name {
            return try Evaluation.replay(scenario: run.scenario, inputs: run.inputs, config: config,
                                         estimator: DecisionTrace(engine, beacon: trace[1], scenario: run.scenario))
        }
        var core = config.makeCore(engine: engine)
        let result = try Evaluation.replay(scenario: run.scenario, inputs: run.inputs, core: &core)
        if showOffsets, let generated { printOffsets(core.engine, generated) }
        return result
    }]
}

/// The offsets `engine` learned beside the simulator's true ones, and the error (rms, each
/// side's mean removed: a bias common to every node is the beacons' power) beside learning nothing.
func printOffsets(_ end: FusionEngine, _ generated: GeneratedScenario) {
    let nodes = generated.scenario.layout.nodes
    let rows = nodes.map { n in
        String(format: "%@ %+.1f/%+.1f", n.name, end.learnedOffset(of: n.name) ?? .nan, generated.receiverOffsets[n.name] ?? .nan)
    }
    let pairs = nodes.map { (end.learnedOffset(of: $0.name) ?? 0, generated.receiverOffsets[$0.name] ?? 0) }
    let n = Double(max(pairs.count, 1))
    let (ml, mt) = (pairs.map(\.0).reduce(0, +) / n, pairs.map(\.1).reduce(0, +) / n)
    let error = (pairs.map { (($0.0 - ml) - ($0.1 - mt)) * (($0.0 - ml) - ($0.1 - mt)) }.reduce(0, +) / n).squareRoot()
    let untaught = (pairs.map { ($0.1 - mt) * ($0.1 - mt) }.reduce(0, +) / n).squareRoot()
    print("  roomcast-x learned/true offsets: " + rows.joined(separator: ", ")
          + String(format: " | error %.2f dB rms (%.2f learning nothing)", error, untaught))
}
