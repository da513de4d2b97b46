import Foundation
import RoomcastAggregator
import RoomcastFusion
import RoomcastSimulation
import Shared
import Synchronization

/// Scores the baselines (and any estimators handed in) on many simulated scenarios —
/// layouts × seeds × noise levels — and on recorded ones, side by side, every one through
/// the product's path (`ScenarioRun`: each node's capture through the edge agent, the
/// readings through the aggregator core).
///
/// Seeds are split so tuning never sees the scenarios used for checking:
/// `--split tune` uses seeds 1…n, `--split check` seeds 1001…1000+n.
enum SimulationBenchmark {
    /// A named estimator to compare with the baselines: the aggregator core it runs in,
    /// built from the scenario's site config (and, for diagnostics, the generated scenario).
    struct Contender {
        var name: String
        var replay: (ScenarioRun, AggregatorConfig, GeneratedScenario?) throws -> Evaluation.Result

        init(name: String, replay: @escaping (ScenarioRun, AggregatorConfig, GeneratedScenario?) throws -> Evaluation.Result) {
            self.name = name
            self.replay = replay
        }

        /// `estimator(site)` in the site's aggregator core.
        init<E: PresenceEstimator & Sendable>(name: String, estimator: @escaping (SiteModel) -> E) {
            self.init(name: name) { run, config, _ in
                try Evaluation.replay(scenario: run.scenario, inputs: run.inputs, config: config,
                                      estimator: estimator(config.partitionedSite))
            }
        }

        /// Roomcast as `aggregator replay --config site.yaml` runs it.
        static var roomcast: Contender {
            Contender(name: "roomcast") { run, config, _ in
                try Evaluation.replay(scenario: run.scenario, inputs: run.inputs, config: config)
            }
        }
    }

    static let usage = """
        USAGE: roomcast-bench simulation [options]

        OPTIONS:
          --layouts <list>     Comma-separated: house,flat,office,cottage,openplan,townhouse,
                               sparse,house-outages (default: house,flat,office; on the check
                               split also openplan,townhouse,sparse,house-outages).
          --noise <list>       Comma-separated: low,normal,high (default: normal,high).
          --seeds <n>          Scenarios per layout and noise level (default: 3).
          --split <tune|check|holdout>
                               Seed range: tune = 1…n, check = 1001…1000+n (default: check),
                               holdout = 2001…2000+n (never looked at while tuning).
          --duration <s>       Seconds per scenario (default: 900).
          --scenario <dir>     Also score a recorded scenario directory (repeatable).
          --only <list>        Comma-separated estimator names to run (default: all).
          --no-positions       The aggregator gets rooms and node membership only (no room
                               polygons, no node positions), as a user who gives none.
          --flaps <name>       Also list that estimator's flaps per beacon (diagnostics).
          --node-beacons       Every node also transmits an iBeacon (calibration from node links).
          --walk-out           People leaving walk out through the exit room's outer wall, heard
                               as their signal fades, instead of vanishing in the exit room.
          --placement <off-centre|centred>
                               Where nodes sit in their rooms (default: off-centre).
          --mean-stay <s>      People's mean stay in a room (default: 90): long stays (sleep,
                               a desk) test how a room follows after hours of stillness.

        ROWS:
          bound                The nearest-node bound: strongest noise-free signal, calibrated.
          ceil-nearest         The same rule on the noise-free signal plus the spot's shadowing.
          ceil-position        The best-fitting position under the exact radio model, from that.

        ENVIRONMENT (diagnostics):
          BENCH_FUSION=JSON    Adds contender roomcast-x with these fusion settings (config keys).
          BENCH_CALIBRATED=1   roomcast-x gets every receiver's true offset as rx_adjust;
                               =1m the rx_adjust `aggregator calibrate` would find with a
                               beacon carried round each node at 1 m (offset and those
                               spots' shadowing, as a median).
          BENCH_OFFSETS=1      Prints each fusion engine's learned offsets beside the true ones, and
                               the error (rms, mean removed) beside learning nothing.
          BENCH_TRACE=S/B      Prints roomcast-x's decision and explanation for beacon B of
                               scenario S (e.g. flat-normal-2001/tag-0) every tick.
          BENCH_RADIO=k=v,...  Radio model fields over the noise preset: exponent, wall, offset,
                               shadowing, distance, drift, fading, loss, spread, deepfade
                               (chance of a deep fade per packet), deepdepth (its mean, dB),
                               wallspread (how much walls differ in loss, dB), kernel
                               (shadowing's fall-off: 1 exponential, the default; 0 the
                               smooth Gaussian of stops 11-15, with distance=0.8), frozen
                               (fading per advertising channel that stays at a spot, dB),
                               frozendistance (its fall-off, m), inturn (1: channels received
                               in turn; docs/simulator.md, Radio).

        """

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// Runs the benchmark with the baselines only.
    static func run(arguments: [String]) throws {
        try run(arguments: arguments, contenders: [])
    }

    /// Runs the benchmark with the baselines plus `contenders`, printing one line per
    /// scenario and estimator and a mean per estimator at the end.
    static func run(arguments: [String], contenders: [Contender]) throws {
        var chosenLayouts: [String]?
        var split = "check"
        var noises: [RadioModel.Noise] = [.normal, .high]
        var seeds = 3
        var base: UInt64 = 1000
        var duration = 900.0
        var recorded: [String] = []
        var only: Set<String>?
        var flapsOf: String?
        var nodeBeacons = false
        var walkOut = false
        var placement = NodePlacement.offCentre
        var meanStay: Double?
        var positions = true
        var i = 0
        func value() throws -> String {
            guard i + 1 < arguments.count else { throw Failure(description: "missing value for \(arguments[i])\n\n\(usage)") }
            i += 1
            return arguments[i]
        }
        while i < arguments.count {
            switch arguments[i] {
            case "--layouts": chosenLayouts = try value().split(separator: ",").map(String.init)
            case "--noise":
                noises = try value().split(separator: ",").map {
                    guard let n = RadioModel.Noise(rawValue: String($0)) else { throw Failure(description: "bad noise '\($0)'") }
                    return n
                }
            case "--seeds":
                guard let n = Int(try value()), n > 0 else { throw Failure(description: "--seeds needs a positive integer") }
                seeds = n
            case "--split":
                split = try value()
                switch split {
                case "tune": base = 0
                case "check": base = 1000
                case "holdout": base = 2000
                case let other: throw Failure(description: "--split must be tune, check or holdout, not '\(other)'")
                }
            case "--duration":
                guard let d = Double(try value()), d > 0 else { throw Failure(description: "--duration needs seconds") }
                duration = d
            case "--scenario": recorded.append(try value())
            case "--only": only = Set(try value().split(separator: ",").map(String.init))
            case "--no-positions": positions = false
            case "--flaps": flapsOf = try value()
            case "--node-beacons": nodeBeacons = true
            case "--walk-out": walkOut = true
            case "--placement":
                let v = try value()
                guard let p = NodePlacement(rawValue: v) else {
                    throw Failure(description: "--placement must be off-centre or centred, not '\(v)'")
                }
                placement = p
            case "--mean-stay":
                guard let d = Double(try value()), d > 0 else { throw Failure(description: "--mean-stay needs seconds") }
                meanStay = d
            case "-h", "--help":
                print(usage, terminator: "")
                return
            default: throw Failure(description: "unknown argument '\(arguments[i])'\n\n\(usage)")
            }
            i += 1
        }
        let layouts = chosenLayouts ?? FloorPlan.benchmarkNames(split: split)
        for l in layouts where FloorPlan.named(l) == nil { throw Failure(description: "unknown layout '\(l)'") }

        var rows: [Contender] = Baselines.all.map { b in
            Contender(name: b.name) { AnyPresenceEstimator(b.make(site: $0)) }
        } + contenders
        if let only { rows = rows.filter { only.contains($0.name) || $0.name == "bound" } }
        /// Sums over the simulated scenarios, per estimator.
        struct Totals {
            var accuracy = 0.0, inRoom = 0.0, flaps = 0.0
            /// Room decisions made for beacons that had left, summed.
            var movesWhileAway = 0
            /// Sum and count of the scenarios' median switch latencies.
            var latency = 0.0, latencies = 0
            /// Every switch latency of every scenario, for the pooled median.
            var all: [Double] = []
            var n = 0
        }
        var totals: [String: Totals] = [:]
        let calibrated = ProcessInfo.processInfo.environment["BENCH_CALIBRATED"] != nil
        let oneMetre = ProcessInfo.processInfo.environment["BENCH_CALIBRATED"] == "1m"

        /// Prints one line; simulated scenarios also go into the means.
        func report(_ scenario: String, _ name: String, _ score: Score, simulated: Bool = true) {
            let lat = score.medianSwitchLatency.map { String(format: "%5.1f", $0) } ?? "    -"
            let away = score.medianAwayLatency.map { String(format: "%5.1f", $0) } ?? "    -"
            print("\(scenario.padding(toLength: 24, withPad: " ", startingAt: 0)) "
                + "\(name.padding(toLength: 16, withPad: " ", startingAt: 0)) "
                + String(format: "%6.3f %7.2f", score.settledAccuracy, score.flapsPerHour) + " \(lat) \(away)"
                + String(format: " %6d %7.3f %6d", score.missedSwitches, score.roomAccuracy, score.movesWhileAway))
            guard simulated else { return }
            var t = totals[name] ?? Totals()
            t.all += score.switchLatencies
            t.accuracy += score.settledAccuracy
            t.inRoom += score.roomAccuracy
            t.movesWhileAway += score.movesWhileAway
            t.flaps += score.flapsPerHour
            if let l = score.medianSwitchLatency {
                t.latency += l
                t.latencies += 1
            }
            t.n += 1
            totals[name] = t
        }
        func header() {
            print("scenario                 estimator        settled flaps/h  lat_s away_s missed in_room gone_moves")
        }

        header()
        for dir in recorded {
            let run = try awaitResult { try await ScenarioRun.load(directory: URL(fileURLWithPath: dir)) }
            let config = try run.site(positions: positions)
            for c in rows {
                let result = try c.replay(run, config, nil)
                report(run.scenario.name, c.name, result.score, simulated: false)
                if c.name == flapsOf {
                    print("  switch latencies: " + result.score.switchLatencies.map { String(format: "%.1f", $0) }.joined(separator: " "))
                    listFlaps(result.timeline, run.scenario)
                }
            }
        }
        for layout in layouts {
            for noise in noises {
                for k in 1...seeds {
                    var settings = SimulationSettings(plan: FloorPlan.named(layout)!, seed: base + UInt64(k), duration: duration)
                    settings.radio = RadioModel(noise: noise)
                    settings.nodeBeacons = nodeBeacons
                    settings.walkOut = walkOut
                    settings.placement = placement
                    if let meanStay { settings.meanStay = meanStay }
                    try applyRadioOverrides(&settings.radio)
                    let simulator = ScenarioSimulator(settings: settings)
                    let generated = simulator.run()
                    let name = "\(layout)-\(noise.rawValue)-\(base + UInt64(k))"
                    report(name, "bound", generated.boundScore())
                    let ceilings = simulator.ceilings(), scorer = Scorer(), start = generated.scenario.layout.t0
                    report(name, "ceil-nearest", scorer.score(ceilings.nearest, truth: generated.scenario.truth, start: start))
                    report(name, "ceil-position", scorer.score(ceilings.position, truth: generated.scenario.truth, start: start))
                    let run = try awaitResult { try await ScenarioRun.generated(generated) }
                    let config = try run.site(positions: positions)
                    for c in rows {
                        var site = config
                        if calibrated && c.name == "roomcast-x" {
                            site = try run.site(positions: positions, rxAdjust: oneMetre
                                ? simulator.oneMetreCalibration() : generated.receiverOffsets.mapValues { -$0 })
                        }
                        let result = try c.replay(run, site, generated)
                        report(name, c.name, result.score)
                        if c.name == flapsOf { listFlaps(result.timeline, generated.scenario, bound: generated.bound) }
                    }
                }
            }
        }
        print("\nmean over \(totals["bound"]?.n ?? 0) simulated scenarios")
        header()
        for name in ["bound", "ceil-nearest", "ceil-position"] + rows.map(\.name) {
            guard let t = totals[name], t.n > 0 else { continue }
            let n = Double(t.n)
            print("\("(mean)".padding(toLength: 24, withPad: " ", startingAt: 0)) "
                + "\(name.padding(toLength: 16, withPad: " ", startingAt: 0)) "
                + String(format: "%6.3f %7.2f %5.1f", t.accuracy / n, t.flaps / n,
                         t.latencies > 0 ? t.latency / Double(t.latencies) : .nan)
                + String(format: "              %7.3f  pooled median switch %.1f s, %d moves while away", t.inRoom / n,
                         Score.median(t.all) ?? .nan, t.movesWhileAway))
        }
    }

    /// `BENCH_RADIO="fading=0,drift=0"`: overrides radio-model fields on top of the noise
    /// preset, to take the noise apart term by term (diagnostics; printed when set).
    static func applyRadioOverrides(_ radio: inout RadioModel) throws {
        guard let spec = ProcessInfo.processInfo.environment["BENCH_RADIO"] else { return }
        for pair in spec.split(separator: ",") {
            let kv = pair.split(separator: "=", maxSplits: 1).map(String.init)
            guard kv.count == 2, let v = Double(kv[1]) else { throw Failure(description: "BENCH_RADIO: bad '\(pair)'") }
            switch kv[0] {
            case "exponent": radio.pathLossExponent = v
            case "wall": radio.wallLoss = v
            case "offset": radio.receiverOffsetSigma = v
            case "shadowing": radio.shadowingSigma = v
            case "distance": radio.shadowingDistance = v
            case "drift": radio.driftSigma = v
            case "fading": radio.fadingSigma = v
            case "frozen": radio.frozenFadingSigma = v
            case "frozendistance": radio.frozenFadingDistance = v
            case "inturn": radio.channelsInTurn = v != 0
            case "loss": radio.lossProbability = v
            case "spread": radio.powerSpread = v
            case "deepfade": radio.deepFadeProbability = v
            case "deepdepth": radio.deepFadeDepth = v
            case "wallspread": radio.wallLossSpread = v
            case "kernel": radio.shadowingKernel = v == 0 ? .gaussian : .exponential
            default: throw Failure(description: "BENCH_RADIO: unknown field '\(kv[0])'")
            }
        }
    }

    /// Prints, per beacon with flaps, every decision change that no truth change explains:
    /// when, from and to which room, and the truth then; and per beacon its wrong settled
    /// seconds (beside the bound's, when there is one) and the rooms it was mistaken for.
    static func listFlaps(_ timeline: DecisionTimeline, _ scenario: Scenario, bound: DecisionTimeline? = nil) {
        let scorer = Scorer()
        let runs = scorer.runs(scenario.truth)
        let start = scenario.layout.t0
        for beacon in scenario.beacons {
            guard let list = runs[beacon.id] else { continue }
            var settled = 0, wrong = 0, boundWrong = 0
            var mistaken: [String: Int] = [:]
            for run in list {
                scorer.forEachSettledSecond(of: run, start: start) { t in
                    settled += 1
                    let room = timeline.room(of: beacon.id, at: t)
                    if room != run.room {
                        wrong += 1
                        mistaken["\(run.room ?? "away")→\(room ?? "away")", default: 0] += 1
                    }
                    if let bound, bound.room(of: beacon.id, at: t) != run.room { boundWrong += 1 }
                }
            }
            if wrong > 0 {
                let top = mistaken.sorted { $0.value > $1.value }.prefix(3).map { "\($0.key) \($0.value)" }.joined(separator: ", ")
                print("  \(beacon.name ?? beacon.id.description) mobile=\(beacon.mobile): wrong \(wrong)/\(settled) s"
                    + (bound != nil ? " (bound \(boundWrong))" : "") + ": \(top)")
            }
            guard let changes = timeline.changes[beacon.id] else { continue }
            var lines: [String] = []
            var previous: String? = nil
            for c in changes {
                defer { previous = c.room }
                guard let run = list.first(where: { c.t >= $0.t0 && c.t < $0.t1 }) else { continue }
                let gone = scorer.isMoveWhileAway(c, list)
                guard gone || scorer.isFlap(c, list) else { continue }
                lines.append(String(format: "    t=%6.1f ", c.t - start) + "\(previous ?? "away") → \(c.room ?? "away") (truth \(run.room ?? "away")"
                    + (gone ? String(format: ", left %.1f s before", c.t - run.t0) : String(format: " for %.0f s", c.t - run.t0)) + ")")
            }
            guard !lines.isEmpty else { continue }
            print("  \(beacon.name ?? beacon.id.description) kind=\(beacon.kind) mobile=\(beacon.mobile) interval=\(beacon.interval ?? 0): \(lines.count) flaps or moves while away")
            lines.prefix(12).forEach { print($0) }
        }
    }
}

/// Waits for an async evaluation step from the benchmark's synchronous loop (a command-line
/// tool with nothing else to run: the semaphore blocks only the main thread).
func awaitResult<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) throws -> T {
    let box = ResultBox<T>()
    let done = DispatchSemaphore(value: 0)
    Task {
        do { box.set(.success(try await body())) } catch { box.set(.failure(error)) }
        done.signal()
    }
    done.wait()
    return try box.get()
}

final class ResultBox<T: Sendable>: Sendable {
    private let value = Mutex<Result<T, any Error>?>(nil)
    func set(_ v: Result<T, any Error>) { value.withLock { $0 = v } }
    func get() throws -> T { try value.withLock { $0 }!.get() }
}
