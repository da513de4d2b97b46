import Foundation
import RoomcastFusion
import RoomcastSimulation
import Shared
import RoomcastCLI

// roomcast-bench: benchmarks that print numbers. Run a release build:
//   swift run -c release roomcast-bench <name> [options]
let spec = CommandSpec(
    "roomcast-bench",
    abstract: "Benchmarks that print numbers (run a release build).",
    subcommands: [
        HCIBenchmark.spec,
        AdvertisingBenchmark.spec,
        AgentBenchmark.spec,
        CrowdBenchmark.spec,
        FusionBenchmark.spec,
        SimulationBenchmark.spec,
        AggregatorBenchmark.spec,
        RadioBenchmark.spec,
        ResultsBenchmark.spec,
        CommandSpec("reference", abstract: "print the fusion settings reference that docs/configuration.md carries",
                    run: benchmark { _ in print(FusionSettings.referenceMarkdown(), terminator: "") }),
    ])

await CommandLineTool.main(spec)
