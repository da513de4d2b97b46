import Foundation
import RoomcastAggregator
import RoomcastFusion
import RoomcastSimulation
import Shared
import Synchronization
import RoomcastCLI

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

    static let layouts = Option<String?>(
        "layouts", value: "list",
        help: "Comma-separated: house,flat,office,cottage,openplan,townhouse,sparse,house-outages (default: house,flat,office; "
            + "on the check split also openplan,townhouse,sparse,house-outages; empty: only the --scenario directories).")
    static let noise = Option<String>("noise", value: "list", help: "Comma-separated: low,normal,high.", default: "normal,high")
    static let seeds = Option<Count>("seeds", value: "n", help: "Scenarios per layout and noise level.", default: 3)
    static let split = Option<String>(
        "split", value: "tune|check|holdout",
        help: "Seed range: tune = 1…n, check = 1001…1000+n, holdout = 2001…2000+n (never looked at while tuning).",
        default: "check")
    static let duration = Option<Positive>("duration", value: "s", help: "Seconds per scenario.", default: 900)
    static let scenarios = Option<[String]>("scenario", value: "dir", help: "Also score a recorded scenario directory.")
    static let only = Option<String?>("only", value: "list", help: "Comma-separated estimator names to run (default: all).")
    static let noPositions = Flag("no-positions", help: "The aggregator gets rooms and node membership only (no room polygons, "
                                  + "no node positions), as a user who gives none.")
    static let flaps = Option<String?>("flaps", value: "name", help: "Also list that estimator's flaps per beacon (diagnostics).")
    static let nodeBeacons = Flag("node-beacons", help: "Every node also transmits an iBeacon (calibration from node links).")
    static let walkOut = Flag("walk-out", help: "People leaving walk out through the exit room's outer wall, heard as their "
                              + "signal fades, instead of vanishing in the exit room.")
    static let placement = Option<String>("placement", value: "off-centre|centred", help: "Where nodes sit in their rooms.",
                                          default: "off-centre")
    static let meanStay = Option<Positive?>("mean-stay", value: "s", help: "People's mean stay in a room: long stays (sleep, a "
                                            + "desk) test how a room follows after hours of stillness.", shownDefault: "90")
    static let fusionConfig = Option<String?>(
        "fusion-config", value: "file",
        help: "Adds contender roomcast-x with these fusion settings: a file of the config's fusion: keys (YAML or JSON).")
    static let calibrated = Option<String?>(
        "calibrated", value: "exact|1m",
        help: "roomcast-x gets every receiver's true offset as rx_adjust (exact), or the rx_adjust `aggregator calibrate` "
            + "would find with a beacon carried round each node at 1 m (1m: offset and those spots' shadowing, as a median).")
    static let offsets = Flag("offsets", help: "Print roomcast-x's learned offsets beside the true ones, and the error (rms, "
                              + "mean removed) beside learning nothing.")
    static let trace = Option<String?>("trace", value: "scenario/beacon", help: "Print roomcast-x's decision and explanation "
                                       + "for that beacon of that scenario (e.g. flat-normal-2001/tag-0) every tick.")

    static let spec = CommandSpec(
        "simulation", abstract: "room accuracy of Roomcast's fusion beside the baselines on generated homes",
        discussion: """
            Rows beside the estimators: bound, the nearest-node bound (strongest noise-free signal, calibrated); \
            ceil-nearest, the same rule on the noise-free signal plus the spot's shadowing; ceil-position, the \
            best-fitting position under the exact radio model, from that.
            Diagnostics: --fusion-config, --calibrated, --offsets or --trace add a contender roomcast-x, the engine \
            with the settings of --fusion-config (the defaults without it).
            """,
        options: [layouts, noise, seeds, split, duration, scenarios, only, noPositions, flaps, nodeBeacons, walkOut, placement,
                  meanStay, fusionConfig, calibrated, offsets, trace, BenchOptions.radio],
        run: benchmark { command in try run(command, contenders: [.roomcast] + experimentalContenders(command)) })

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// The seeds of one split: the next split's begin 1000 on.
    static let maximumSeeds = 999

    /// The seed before a split's first (its homes are seeds base+1…base+n); nil for no split.
    static func seedBase(split: String) -> UInt64? {
        switch split {
        case "tune": return 0
        case "check": return 1000
        case "holdout": return 2000
        default: return nil
        }
    }

    /// Runs the benchmark with the baselines plus `contenders`, printing one line per
    /// scenario and estimator and a mean per estimator at the end.
    static func run(_ command: ParsedCommand, contenders: [Contender]) throws {
        let chosenLayouts = command[Self.layouts].map { $0.split(separator: ",").map(String.init) }
        let noises: [RadioModel.Noise] = try command[noise].split(separator: ",").map {
            guard let n = RadioModel.Noise(rawValue: String($0)) else {
                throw command.usageError("--noise: no noise level '\($0)'; the levels: \(RadioModel.Noise.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            return n
        }
        let seeds = try command[Self.seeds].value
        // More would take the next split's homes: a check run on tuning homes, or one home twice.
        guard seeds <= maximumSeeds else { throw command.usageError("--seeds: a split has \(maximumSeeds) seeds, not \(seeds)") }
        let split = command[Self.split]
        guard let base = seedBase(split: split) else {
            throw command.usageError("--split must be tune, check or holdout, not '\(split)'")
        }
        let duration = try command[Self.duration].value
        let recorded = command[scenarios]
        let only = command[Self.only].map { Set($0.split(separator: ",").map(String.init)) }
        let flapsOf = command[flaps]
        let nodeBeacons = command[Self.nodeBeacons]
        let walkOut = command[Self.walkOut]
        guard let placement = NodePlacement(rawValue: command[Self.placement]) else {
            throw command.usageError("--placement must be off-centre or centred, not '\(command[Self.placement])'")
        }
        let meanStay = try command[Self.meanStay]?.value
        let positions = !command[noPositions]
        let layouts = chosenLayouts ?? FloorPlan.benchmarkNames(split: split)
        for l in layouts where FloorPlan.named(l) == nil { throw command.usageError("--layouts: no layout '\(l)'") }

        var rows: [Contender] = Baselines.all.map { b in
            Contender(name: b.name) { AnyPresenceEstimator(b.make(site: $0)) }
        } + contenders
        // A name that is no row (a typo, or a diagnostic row its option did not add) would run
        // nothing of it; flaps are listed for estimators only.
        let rowNames = ["bound", "ceil-nearest", "ceil-position"] + rows.map(\.name)
        for name in (only.map { $0.sorted() } ?? []) where !rowNames.contains(name) {
            throw command.usageError("--only: no row '\(name)' with these options; the rows: \(rowNames.joined(separator: ", "))")
        }
        if let name = flapsOf, !rows.contains(where: { $0.name == name }) {
            throw command.usageError("--flaps: no estimator '\(name)' with these options; the estimators: \(rows.map(\.name).joined(separator: ", "))")
        }
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
        let calibrated = command[Self.calibrated] != nil
        let oneMetre = command[Self.calibrated] == "1m"

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
                    try applyRadioOverrides(&settings.radio, command)
                    let simulator = ScenarioSimulator(settings: settings)
                    let name = "\(layout)-\(noise.rawValue)-\(base + UInt64(k))"
                    var built = simulator.run()
                    // The name the rows print is the one `--trace` takes.
                    built.scenario.name = name
                    let generated = built
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
        // Recorded scenarios alone (`--layouts ""`) have no simulated mean to print.
        guard let simulated = totals["bound"]?.n, simulated > 0 else { return }
        print("\nmean over \(simulated) simulated scenarios")
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

    /// `--radio fading=0,drift=0`: overrides radio-model fields on top of the noise
    /// preset, to take the noise apart term by term (diagnostics).
    static func applyRadioOverrides(_ radio: inout RadioModel, _ command: ParsedCommand) throws {
        guard let spec = command[BenchOptions.radio] else { return }
        for pair in spec.split(separator: ",") {
            let kv = pair.split(separator: "=", maxSplits: 1).map(String.init)
            guard kv.count == 2, let v = Double(kv[1]) else { throw command.usageError("--radio: bad '\(pair)'") }
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
            default: throw command.usageError("--radio: unknown field '\(kv[0])'")
            }
        }
    }

    /// Contender `roomcast-x`, the engine with the settings of `--fusion-config` (the defaults
    /// without it), when that or a diagnostic of it is asked for: `--calibrated` (its site gets
    /// rx_adjust), `--trace SCENARIO/BEACON` (its decisions for one beacon), `--offsets` (the
    /// receiver offsets it learned beside the simulator's).
    static func experimentalContenders(_ command: ParsedCommand) throws -> [Contender] {
        let file = try BenchOptions.fusionSettings(command, fusionConfig)
        guard file != nil || command[calibrated] != nil || command[offsets] || command[Self.trace] != nil else { return [] }
        let settings = file ?? FusionSettings()
        if let how = command[calibrated], how != "exact", how != "1m" {
            throw command.usageError("--calibrated must be exact or 1m, not '\(how)'")
        }
        var trace: [String]?
        if let text = command[Self.trace] {
            let parts = text.split(separator: "/", maxSplits: 1).map(String.init)
            guard parts.count == 2 else { throw command.usageError("--trace takes SCENARIO/BEACON, not '\(text)'") }
            trace = parts
        }
        let showOffsets = command[offsets]
        return [.init(name: "roomcast-x") { run, config, generated in
            let engine = FusionEngine(site: config.partitionedSite, settings: settings)
            if let trace, trace[0] == run.scenario.name {
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
    static func printOffsets(_ end: FusionEngine, _ generated: GeneratedScenario) {
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
                let top = mistaken.sorted { ($0.value, $1.key) > ($1.value, $0.key) }.prefix(3).map { "\($0.key) \($0.value)" }.joined(separator: ", ")
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
