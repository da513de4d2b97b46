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
        try SimulationBenchmark.run(arguments: arguments, contenders: [
            .init(name: "roomcast", make: { site in FusionEngine(site: site) }),
        ] + experimentalContenders())
    }),
    ("aggregator", "readings/s, switch latency and memory through a real mosquitto", AggregatorBenchmark.run),
    ("radio", "each noise preset's spread over time beside the recordings (robot, stopped and moving)", RadioBenchmark.run),
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
func experimentalContenders() -> [SimulationBenchmark.Contender] {
    guard let json = ProcessInfo.processInfo.environment["BENCH_FUSION"] else { return [] }
    do {
        let settings = try JSONDecoder().decode(FusionSettings.self, from: Data(json.utf8))
        var options = Evaluation.Options()
        if let ranging = ProcessInfo.processInfo.environment["BENCH_RANGING"] {
            options.ranging = try JSONDecoder().decode(RangingConfig.self, from: Data(ranging.utf8))
        }
        if let interval = ProcessInfo.processInfo.environment["BENCH_PUBLISH_INTERVAL"].flatMap(Double.init) {
            options.publishInterval = interval
        }
        if let interval = ProcessInfo.processInfo.environment["BENCH_TICK_INTERVAL"].flatMap(Double.init) {
            options.tickInterval = interval
        }
        return [.init(name: "roomcast-x", options: options, make: { site in FusionEngine(site: site, settings: settings) })]
    } catch {
        FileHandle.standardError.write(Data("BENCH_FUSION: \(error)\n".utf8))
        exit(64)
    }
}
