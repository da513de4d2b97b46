import Foundation
import RoomcastSimulation
import Shared

// Thin wiring: parse arguments, call RoomcastSimulation, map failures to exit codes.
// (A shared CLI library is being written; this hand-rolled parsing is temporary.)

let usage = """
    USAGE: roomcast-sim <command> [options]

    COMMANDS:
      generate   Write a simulated scenario directory.
      score      Replay a scenario through estimators and print their scores.

    OPTIONS (generate):
      --layout <house|flat|office>   Floor plan (default: house).
      --seed <n>                     Random seed (default: 1).
      --duration <s>                 Seconds to simulate (default: 900).
      --noise <low|normal|high>      Radio noise level (default: normal).
      --gzip                         Write raw.jsonl.gz instead of raw.jsonl.
      --out <dir>                    Output directory (required).

    OPTIONS (score):
      --scenario <dir>               Scenario directory (required).
      --estimator <name>             One of \(Baselines.names.joined(separator: ", ")), bound
                                     (simulated scenarios only), or all (default).
      --json                         Print scores as JSON lines.
      -h, --help                     Show this help.

    """

struct UsageError: Error { var message: String }

func parse(_ args: ArraySlice<String>, flags: Set<String>) throws -> [String: String] {
    var out: [String: String] = [:]
    var i = args.startIndex
    while i < args.endIndex {
        let a = args[i]
        guard a.hasPrefix("--") else { throw UsageError(message: "unexpected argument '\(a)'") }
        let key = String(a.dropFirst(2))
        if flags.contains(key) {
            out[key] = "true"
            i += 1
            continue
        }
        guard i + 1 < args.endIndex else { throw UsageError(message: "missing value for \(a)") }
        out[key] = args[i + 1]
        i += 2
    }
    return out
}

func run() -> Int32 {
    let args = CommandLine.arguments.dropFirst()
    guard let command = args.first, !["-h", "--help", "help"].contains(command) else {
        print(usage, terminator: "")
        return args.isEmpty ? 64 : 0
    }
    do {
        switch command {
        case "score":
            let o = try parse(args.dropFirst(), flags: ["json"])
            guard let dir = o["scenario"] else { throw UsageError(message: "score needs --scenario DIR") }
            let scenario = try Scenario.load(from: URL(fileURLWithPath: dir))
            let which = o["estimator"] ?? "all"
            let names = which == "all" ? Baselines.names + ["bound"] : [which]
            for name in names {
                let score: Score
                if name == "bound" {
                    guard let bound = try DecisionTimeline.load(boundIn: URL(fileURLWithPath: dir)) else { continue }
                    score = Scorer().score(bound, truth: scenario.truth, start: scenario.layout.t0)
                } else {
                    guard let baseline = Baselines.named(name) else {
                        throw UsageError(message: "unknown estimator '\(name)'; known: \(Baselines.names.joined(separator: ", "))")
                    }
                    score = baseline.run(scenario: scenario)
                }
                if o["json"] != nil {
                    struct Line: Encodable { var scenario: String; var estimator: String; var score: Score }
                    let enc = JSONEncoder()
                    enc.outputFormatting = [.sortedKeys]
                    print(String(decoding: try enc.encode(Line(scenario: scenario.name, estimator: name, score: score)), as: UTF8.self))
                } else {
                    print("\(name.padding(toLength: 16, withPad: " ", startingAt: 0)) \(score.summary)  (settled n=\(score.settledSamples), flaps \(score.flaps), switches \(score.switchLatencies.count), missed \(score.missedSwitches))")
                }
            }
            return 0
        case "generate":
            let o = try parse(args.dropFirst(), flags: ["gzip"])
            guard let out = o["out"] else { throw UsageError(message: "generate needs --out DIR") }
            let layoutName = o["layout"] ?? "house"
            guard let plan = FloorPlan.named(layoutName) else {
                throw UsageError(message: "unknown layout '\(layoutName)'; known: \(FloorPlan.names.joined(separator: ", "))")
            }
            guard let seed = UInt64(o["seed"] ?? "1") else { throw UsageError(message: "--seed must be an unsigned integer") }
            guard let duration = Double(o["duration"] ?? "900"), duration > 0 else {
                throw UsageError(message: "--duration must be a positive number of seconds")
            }
            guard let noise = RadioModel.Noise(rawValue: o["noise"] ?? "normal") else {
                throw UsageError(message: "--noise must be low, normal or high")
            }
            var settings = SimulationSettings(plan: plan, seed: seed, duration: duration)
            settings.radio = RadioModel(noise: noise)
            let generated = ScenarioSimulator(settings: settings).run()
            try DirectoryScenarioWriter(directory: URL(fileURLWithPath: out), gzip: o["gzip"] != nil).write(generated)
            print("wrote \(out): \(generated.scenario.packets.count) packets, \(generated.scenario.truth.count) truth spans")
            return 0
        default:
            throw UsageError(message: "unknown command '\(command)'")
        }
    } catch let e as UsageError {
        FileHandle.standardError.write(Data("error: \(e.message)\n\n\(usage)".utf8))
        return 64
    } catch let e as Scenario.LoadError {
        FileHandle.standardError.write(Data("error: \(e.description)\n".utf8))
        return 65
    } catch {
        FileHandle.standardError.write(Data("error: \(error)\n".utf8))
        return 1
    }
}

exit(run())
