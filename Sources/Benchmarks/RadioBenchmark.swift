import Foundation
import RoomcastSimulation
import Shared
import RoomcastCLI

/// `roomcast-bench radio`: how each noise preset's links vary over time, like for like with
/// the recordings — a robot at the recorded robot's pace and packet rate touring every
/// layout, the spread of its 1-s means within 6 s while stopped and while moving
/// (`RadioSpread`), beside the Kolakowski robot's.
enum RadioBenchmark {
    static let seeds = Option<Count>("seeds", value: "n", help: "Seeds 1…n per layout.", default: 3)
    static let duration = Option<Double>("duration", value: "s", help: "Seconds per tour, at least 60.", default: 1800)
    static let still = Option<String>("still", value: "dir", help: "The still-beacon recording compared over minutes.",
                                      default: "Tests/RoomcastScenarioTests/Fixtures/danis-still")

    static let spec = CommandSpec(
        "radio", abstract: "each noise preset's spread over time beside the recordings (robot, stopped and moving)",
        discussion: "A robot tours each layout (house, flat, office; seeds 1…N) at \(f2(RadioSpread.recordingSpeed)) m/s, "
            + "\(Int(RadioSpread.recordingPacketRate)) packets/s per node, 20-s stops; prints the median spread of 1-s means "
            + "within 6 s while stopped and while moving, per noise preset, beside the Kolakowski robot's. "
            + "Then a still beacon over minutes (StillLinkDrift: 30 spots of 10 min in the office and open-plan layouts) "
            + "beside the Daniş office's still spots (--still).",
        options: [seeds, duration, still, BenchOptions.radio], run: benchmark(run))

    static func run(_ command: ParsedCommand) throws {
        let seeds = try command[Self.seeds].value
        let duration = try command[Self.duration]
        guard duration >= 60 else { throw command.usageError("--duration needs at least 60 s") }

        let reference = RadioSpread.recording
        print("spread of 1-s mean RSSI within 6 s, robot at \(f2(RadioSpread.recordingSpeed)) m/s (dB, median over windows and nodes)")
        print("preset    layout   stopped  moving  windows(stopped/moving)")
        print("recording kolakowski   \(f2(reference.stopped))    \(f2(reference.moving))   \(reference.stoppedWindows)/\(reference.movingWindows)")
        var steps: [String] = []
        for noise in RadioModel.Noise.allCases {
            var stopped: [Double] = [], moving: [Double] = []
            var stepStopped: [Double] = [], stepMoving: [Double] = [], repeatStopped: [Double] = [], repeatMoving: [Double] = []
            for name in FloorPlan.benchmarkNames {
                guard let plan = FloorPlan.named(name) else { continue }
                var layoutStopped: [Double] = [], layoutMoving: [Double] = []
                var windows = (0, 0)
                for seed in 1...seeds {
                    var settings = SimulationSettings(plan: plan, seed: UInt64(seed), duration: duration)
                    settings.radio = RadioModel(noise: noise)
                    try SimulationBenchmark.applyRadioOverrides(&settings.radio, command)
                    let spread = ScenarioSimulator(settings: settings).radioSpread()
                    stepStopped.append(spread.stoppedStep)
                    stepMoving.append(spread.movingStep)
                    repeatStopped.append(spread.stoppedRepeats)
                    repeatMoving.append(spread.movingRepeats)
                    layoutStopped.append(spread.stopped)
                    layoutMoving.append(spread.moving)
                    windows.0 += spread.stoppedWindows
                    windows.1 += spread.movingWindows
                }
                let s = mean(layoutStopped), m = mean(layoutMoving)
                stopped.append(s)
                moving.append(m)
                print("\(noise.rawValue.padding(toLength: 9, withPad: " ", startingAt: 0)) \(name.padding(toLength: 8, withPad: " ", startingAt: 0))     \(f2(s))    \(f2(m))   \(windows.0)/\(windows.1)")
            }
            let s = mean(stopped), m = mean(moving)
            print("\(noise.rawValue.padding(toLength: 9, withPad: " ", startingAt: 0)) (mean)       \(f2(s))    \(f2(m))   ratio to recording \(f2(s / reference.stopped)) / \(f2(m / reference.moving))")
            steps.append("\(noise.rawValue.padding(toLength: 9, withPad: " ", startingAt: 0))          \(f2(mean(stepStopped)))    \(f2(mean(stepMoving)))    \(f2(mean(repeatStopped)))    \(f2(mean(repeatMoving)))")
        }
        print("")
        print("packet to packet (consecutive packets at one node, at most 0.5 s apart): sd of the difference (dB), share equal")
        print("preset             sd stopped  moving  equal stopped  moving")
        print("recording kolakowski   \(f2(reference.stoppedStep))    \(f2(reference.movingStep))    \(f2(reference.stoppedRepeats))    \(f2(reference.movingRepeats))")
        for line in steps { print(line) }

        print("")
        let lags = StillLinkDrift.lags.map { String(format: "%6ds", $0) }.joined()
        print("still beacon, 1-s means: semivariance by lag (dB², median over links), and drift = lag 256 s less lag 4 s")
        print("source                    \(lags)   drift  links")
        func row(_ label: String, _ d: StillLinkDrift) {
            let cells = d.semivariance.map { String(format: "%7.1f", $0) }.joined()
            print(label.padding(toLength: 26, withPad: " ", startingAt: 0) + cells + String(format: "  %6.1f  %5d", d.drift, d.links))
        }
        let recording = try Scenario.load(from: URL(fileURLWithPath: command[Self.still]))
        row("recording \(recording.name)", StillLinkDrift.measure(recording.packets))
        for noise in RadioModel.Noise.allCases {
            for name in ["office", "openplan"] {
                guard let plan = FloorPlan.named(name) else { continue }
                var settings = SimulationSettings(plan: plan, seed: 1, duration: 600)
                settings.radio = RadioModel(noise: noise)
                try SimulationBenchmark.applyRadioOverrides(&settings.radio, command)
                row("\(noise.rawValue) \(name)", ScenarioSimulator(settings: settings).stillLinkDrift())
            }
        }
    }

    static func f2(_ v: Double) -> String { String(format: "%.2f", v) }

    static func mean(_ values: [Double]) -> Double {
        let finite = values.filter(\.isFinite)
        return finite.isEmpty ? .nan : finite.reduce(0, +) / Double(finite.count)
    }
}
