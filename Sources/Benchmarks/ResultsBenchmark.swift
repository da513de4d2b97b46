import Foundation
import RoomcastFusion
import RoomcastSimulation
import Shared
import RoomcastCLI

/// `roomcast-bench results`: the table docs/results.md carries, regenerated from data — the
/// real recordings and the simulator's check and holdout splits, Roomcast's default config beside the
/// baseline rules, every figure through the product's path (`ScenarioRun`: the agent's
/// ranging and publish policy into the aggregator core).
enum ResultsBenchmark {
    static let recordings = Option<String>("recordings", value: "dir",
        help: "Directory of the recorded scenarios (kolakowski-robot, kolakowski-calib, danis-office).",
        default: "Tests/RoomcastScenarioTests/Fixtures")
    static let still = Option<String>("still", value: "dir",
        help: "The still-beacon recording (its packets alone will do; scripts/import-danis-still.py builds the whole of it).",
        default: "Tests/RoomcastScenarioTests/Fixtures/danis-still")
    static let seeds = Option<Count>("seeds", value: "n", help: "Simulated scenarios per layout of the check and holdout splits.", default: 2)
    static let output = Option<String?>("output", value: "file", help: "Write the Markdown here (default: standard output).")

    static let spec = CommandSpec(
        "results", abstract: "the table docs/results.md carries: recordings and simulated homes beside the baselines",
        options: [recordings, still, seeds, output], run: benchmark(run))

    static func run(_ command: ParsedCommand) throws {
        let recordings = command[Self.recordings]
        let seeds = try command[Self.seeds].value
        // The two-receiver homes take many seeds per seed: more would run into the next split's.
        guard seeds <= SimulationBenchmark.maximumSeeds / twoReceiverHomesPerSeed else {
            throw command.usageError("--seeds: at most \(SimulationBenchmark.maximumSeeds / twoReceiverHomesPerSeed), not \(seeds)")
        }
        let output = command[Self.output]
        let load = { (agentConfig: String?) in
            try loadRecordings(URL(fileURLWithPath: recordings), still: URL(fileURLWithPath: command[still]),
                               agentConfig: agentConfig)
        }
        let runs = try load(nil)
        let homes = try checkSplitHomes(seeds: seeds)
        var goals = ResultsGoals()
        var text = header(seeds: seeds)
        text += try recorded(runs, from: recordings, goals: &goals)
        text += try simulated(homes, seeds: seeds, goals: &goals)
        text += try holdout(seeds: seeds, goals: &goals)
        text += try twoReceivers(seeds: seeds)
        text += goals.markdown()
        text += try contributions(runs, homes)
        text += try agentFilter(runs, homes, load: load)
        text += try pathLossExponents(runs, homes)
        if let output {
            try Data(text.utf8).write(to: URL(fileURLWithPath: output))
        } else {
            print(text, terminator: "")
        }
    }

    static func header(seeds: Int) -> String {
        """
        # Results

        What Roomcast's default config decides on real recordings and on the simulator's check
        and holdout splits, beside the rules other systems use. Every figure goes through the
        product's path: each node's capture through the edge agent's ranging and publish policy,
        merged as `aggregator replay` does, into the aggregator core. This file is generated:
        `swift run -c release roomcast-bench results --seeds \(seeds) --output docs/results.md`.
        How the scores are defined: [simulator.md](simulator.md#scoring); the recordings, and
        danis-still (a beacon standing still at spots of the Daniş office):
        `Tests/RoomcastScenarioTests/Fixtures/README.md`.

        Each cell is settled accuracy / flaps per hour / median switch latency (s).

        What was tuned on what: the model's constants were chosen on kolakowski-calib and the
        simulator's tune split (docs/fusion.md), and the weight of a second (`levelVariance`) on
        the Kolakowski tag, which the robot run carries too. kolakowski-calib's figures are
        therefore tuning figures, and the robot run's not wholly independent of them. The check
        and holdout splits were not tuned on, but model designs were compared on them
        (CHANGELOG.md): they are validation data, not data never looked at.


        """
    }

    static func cell(_ score: Score) -> String {
        let latency = score.medianSwitchLatency.map { String(format: "%.1f", $0) } ?? "–"
        return String(format: "%.3f / %.1f / ", score.settledAccuracy, score.flapsPerHour) + latency
    }

    /// The recorded scenarios found under `directory`, in the tables' order, then the still
    /// beacons, each replayed once through the agents (every table below scores the same readings).
    static func loadRecordings(_ directory: URL, still: URL,
                               agentConfig: String? = nil) throws -> [(name: String, run: ScenarioRun)] {
        let found = ["kolakowski-robot", "kolakowski-calib", "danis-office"].map { directory.appendingPathComponent($0) } + [still]
        // One missing would drop its column and its goal rows from every table without a word.
        let missing = found.filter { !FileManager.default.fileExists(atPath: $0.path) }
        guard missing.isEmpty else {
            throw HCIBenchmark.BenchmarkError.usage("no recording at \(missing.map(\.path).joined(separator: ", ")) (run from the package's root, or give --recordings and --still)")
        }
        return try found.map { dir in
            (dir.lastPathComponent, try awaitResult {
                try await ScenarioRun.loadWritingCaptures(directory: dir, agentConfig: agentConfig)
            })
        }
    }

    /// A generated home of the check split: its scenario (the bound and the ceiling come from
    /// the simulator) and its readings through the agents.
    struct SimulatedHome {
        /// The simulator's floor plan (`FloorPlan.named`).
        let layout: String
        let generated: GeneratedScenario
        let ceilingNearest: Score
        let run: ScenarioRun
        /// The same home another day (`SimulationSettings.day` 1), and that day with one person
        /// alone teaching every room in turn (`teachingTour`): what their labels teach.
        let otherDay: ScenarioRun
        let tourDay: ScenarioRun
        /// Roomcast's rows for the same home whose nodes also transmit (`transmittingRows`).
        let transmitting: [(name: String, score: Score)]
    }

    /// The settings of one home of a benchmark split: normal noise, 15 minutes.
    static func homeSettings(layout: String, seed: UInt64) -> SimulationSettings {
        var settings = SimulationSettings(plan: FloorPlan.named(layout)!, seed: seed, duration: 900)
        settings.radio = RadioModel(noise: .normal)
        return settings
    }

    /// Roomcast's rows for the same home whose nodes also advertise a beacon of their own
    /// (`nodeBeacons`), as the README's set-up recommends: the aggregator learns receiver
    /// offsets from them.
    static func transmittingRows(layout: String, seed: UInt64) throws -> [(name: String, score: Score)] {
        var settings = homeSettings(layout: layout, seed: seed)
        settings.nodeBeacons = true
        let generated = ScenarioSimulator(settings: settings).run()
        let run = try awaitResult { try await ScenarioRun.generated(generated) }
        return [(transmittingMembership, try run.roomcast(positions: false).score),
                (transmittingPositions, try run.roomcast(positions: true).score)]
    }

    /// One generated home of a benchmark split (normal noise, 15 minutes): its settings, its
    /// scenario and the `ceil-nearest` score the simulator gives it.
    static func generatedHome(layout: String, seed: UInt64) -> (SimulationSettings, GeneratedScenario, ceiling: Score) {
        let settings = homeSettings(layout: layout, seed: seed)
        let simulator = ScenarioSimulator(settings: settings)
        let generated = simulator.run()
        let ceiling = Scorer().score(simulator.ceilings().nearest, truth: generated.scenario.truth,
                                     start: generated.scenario.layout.t0)
        return (settings, generated, ceiling)
    }

    /// The simulator's check split (normal noise, 15 minutes), generated once.
    static func checkSplitHomes(seeds: Int) throws -> [SimulatedHome] {
        var homes: [SimulatedHome] = []
        for layout in FloorPlan.benchmarkNames(split: "check") {
            for k in 1...seeds {
                let seed = SimulationBenchmark.seedBase(split: "check")! + UInt64(k)
                let (firstDay, generated, ceiling) = generatedHome(layout: layout, seed: seed)
                var settings = firstDay
                settings.day = 1
                let otherDay = ScenarioSimulator(settings: settings).run()
                settings.makeTeachingDay()
                let tourDay = ScenarioSimulator(settings: settings).run()
                homes.append(SimulatedHome(layout: layout, generated: generated, ceilingNearest: ceiling,
                                           run: try awaitResult { try await ScenarioRun.generated(generated) },
                                           otherDay: try awaitResult { try await ScenarioRun.generated(otherDay) },
                                           tourDay: try awaitResult { try await ScenarioRun.generated(tourDay) },
                                           transmitting: try transmittingRows(layout: layout, seed: seed)))
            }
        }
        return homes
    }

    /// The recordings: membership only, with positions, and taught (the Kolakowski flat,
    /// labels from its calibration sessions 1–2 as a user walking each room would give them).
    static func recorded(_ list: [(name: String, run: ScenarioRun)], from directory: String,
                         goals: inout ResultsGoals) throws -> String {
        guard !list.isEmpty else { return "No recordings under \(directory).\n\n" }
        let runs = Dictionary(uniqueKeysWithValues: list)
        let present = list.map(\.name)
        var out = "## Real recordings\n\n"
        out += "| rule | " + present.joined(separator: " | ") + " |\n|---|" + String(repeating: "---|", count: present.count) + "\n"
        /// Writes one row and returns its scores by recording.
        @discardableResult
        func row(_ label: String, _ score: (ScenarioRun) throws -> Score?) throws -> [String: Score] {
            var cells: [String] = []
            var scores: [String: Score] = [:]
            for name in present {
                let result = try score(runs[name]!)
                scores[name] = result
                cells.append(result.map(cell) ?? "–")
            }
            out += "| \(label) | " + cells.joined(separator: " | ") + " |\n"
            return scores
        }
        func record(_ scores: [String: Score], _ keyPath: WritableKeyPath<ResultsGoals.Recording, Score?>) {
            for (name, score) in scores { goals.recordings[name, default: .init()][keyPath: keyPath] = score }
        }
        record(try row("**Roomcast**, node membership only") { try $0.roomcast(positions: false).score }, \.membership)
        record(try row("**Roomcast**, positions and polygons") { try $0.roomcast(positions: true).score }, \.positions)
        // The sessions a taught recording is scored on: those the labels never saw.
        let scoredSessions: [String: Set<Int>] = ["kolakowski-calib": [3, 4]]
        var taught: LearnedRooms?
        if let calib = runs["kolakowski-calib"] {
            taught = try calib.train(sessions: [1, 2], positions: false)
        }
        record(try row("**Roomcast**, membership and taught rooms ¹") { run in
            guard let taught, run.scenario.name.hasPrefix("kolakowski") else { return nil }
            let sessions = scoredSessions[run.scenario.name]
            return try run.roomcast(positions: false, learned: taught, sessions: sessions).score
        }, \.taught)
        record(try row("the same, untaught, on the same sessions") { run in
            guard taught != nil, run.scenario.name.hasPrefix("kolakowski") else { return nil }
            let sessions = scoredSessions[run.scenario.name]
            return try run.roomcast(positions: false, learned: LearnedRooms(), sessions: sessions).score
        }, \.untaught)
        for (name, sessions) in scoredSessions {
            let list = sessions.sorted()
            goals.recordings[name]?.taughtScope = "sessions \(list.first!)–\(list.last!)"
        }
        for baseline in Baselines.all {
            for (name, score) in try row(baseline.name, { try $0.baseline(baseline, positions: false).score }) {
                let best = goals.recordings[name]?.bestRule
                if best == nil || score.settledAccuracy > best!.score.settledAccuracy {
                    goals.recordings[name, default: .init()].bestRule = (baseline.name, score)
                }
            }
        }
        let sizes = present.compactMap { name -> String? in
            guard let s = goals.recordings[name]?.membership, s.truthHours > 0 else { return nil }
            return "\(name) \(s.settledSamples) s scored, \(s.switchLatencies.count + s.missedSwitches) room changes"
                + " (\(s.missedSwitches) not followed), one flap \(String(format: "%.1f", 1 / s.truthHours))/h"
        }
        if !sizes.isEmpty {
            out += "\nHow much each recording holds (Roomcast, membership only): " + sizes.joined(separator: "; ") + "."
                + " A few seconds or one flap moves a figure visibly.\n"
        }
        out += """

            ¹ Taught from kolakowski-calib's sessions 1–2 (`roomcast-sim labels`: a label at the start of
            every stay of 20 s or more); scored on its sessions 3–4 and on the robot run, which the labels
            never saw. West room is not in sessions 1–2, so it stays untaught. The taught rooms are carried,
            not the teaching run's departure counts (`ScenarioRun.train`): those are when its tag was
            switched off between sessions, and the taught and untaught rows start alike, with none.


            """
        return out
    }

    /// Scores over many scenarios: mean accuracy and flaps, the median switch pooled over
    /// every switch.
    struct Tally {
        var accuracy = 0.0, flaps = 0.0, latencies: [Double] = [], n = 0

        mutating func add(_ score: Score) {
            accuracy += score.settledAccuracy
            flaps += score.flapsPerHour
            latencies += score.switchLatencies
            n += 1
        }

        var meanAccuracy: Double { accuracy / Double(max(n, 1)) }
        var meanFlaps: Double { flaps / Double(max(n, 1)) }
        var medianSwitch: Double? { Score.median(latencies) }

        /// "accuracy<separator>flaps<separator>median switch".
        func cell(separator: String) -> String {
            let latency = medianSwitch.map { String(format: "%.1f", $0) } ?? "–"
            return String(format: "%.3f", meanAccuracy) + separator + String(format: "%.2f", meanFlaps)
                + separator + latency
        }
    }

    /// The simulator's check split (normal noise): the means over its scenarios.
    static func simulated(_ homes: [SimulatedHome], seeds: Int, goals: inout ResultsGoals) throws -> String {
        let layouts = FloorPlan.benchmarkNames(split: "check")
        var sums: [String: Tally] = [:]
        func add(_ name: String, _ score: Score) { sums[name, default: Tally()].add(score) }
        for home in homes {
            add("bound", home.generated.boundScore())
            add("ceil-nearest", home.ceilingNearest)
            add("roomcast, membership", try home.run.roomcast(positions: false).score)
            add(Self.positionsRow, try home.run.roomcast(positions: true).score)
            let taught = try home.otherDay.train(positions: false, beacons: home.otherDay.carriedBeacons)
            add("roomcast, membership, taught from another day ²", try home.run.roomcast(positions: false, learned: taught).score)
            let toured = try home.tourDay.train(positions: false)
            add("roomcast, membership, taught by a 30-s tour ²", try home.run.roomcast(positions: false, learned: toured).score)
            for row in home.transmitting { add(row.name, row.score) }
            add("bermuda", try home.run.baseline(Baselines.named("bermuda")!, positions: false).score)
        }
        goals.check = sums
        var out = "## Simulated homes (check split)\n\n"
        out += "Means over \(layouts.count * seeds) scenarios (\(layouts.joined(separator: ", ")); \(seeds) seed\(seeds == 1 ? "" : "s") each, normal noise, 15 minutes);"
        out += " the median switch is pooled over every switch. `bound`: the strongest noise-free signal, calibrated;"
        out += " `ceil-nearest`: the same rule on the noise-free signal plus each spot's shadowing.\n\n"
        out += meansTable(["roomcast, membership", Self.positionsRow, "roomcast, membership, taught from another day ²",
                           "roomcast, membership, taught by a 30-s tour ²", Self.transmittingMembership,
                           Self.transmittingPositions, "bermuda", "ceil-nearest", "bound"], sums)
        out += """

            ² Taught on another day in the same home (the same nodes and radio: `roomcast-sim generate
            --day 1`), then scored on the day above: from that day's stays of 20 s or more of the tags people
            carry (`roomcast-sim labels` gives every tag's; the still tags lie on the same spots both days,
            so their labels would teach the very spots scored); or from one person alone walking every
            room in turn for 30 s, as a user teaching with `aggregator learn --seconds 30` would (`--day 1
            --teaching-tour`).

            \(Self.transmittingNote)
            """
        return out
    }

    /// The holdout split (`roomcast-bench simulation --split holdout`: seeds 2001…, the layouts
    /// every split has), on which no constant of the model was chosen: the check split's
    /// untaught rows again.
    static func holdout(seeds: Int, goals: inout ResultsGoals) throws -> String {
        let layouts = FloorPlan.benchmarkNames(split: "holdout")
        var sums: [String: Tally] = [:]
        func add(_ name: String, _ score: Score) { sums[name, default: Tally()].add(score) }
        for layout in layouts {
            for k in 1...seeds {
                let seed = SimulationBenchmark.seedBase(split: "holdout")! + UInt64(k)
                let (_, generated, ceiling) = generatedHome(layout: layout, seed: seed)
                let run = try awaitResult { try await ScenarioRun.generated(generated) }
                for row in try transmittingRows(layout: layout, seed: seed) { add(row.name, row.score) }
                add("bound", generated.boundScore())
                add("ceil-nearest", ceiling)
                add("roomcast, membership", try run.roomcast(positions: false).score)
                add(Self.positionsRow, try run.roomcast(positions: true).score)
                add("bermuda", try run.baseline(Baselines.named("bermuda")!, positions: false).score)
            }
        }
        goals.holdout = sums
        var out = "\n## Simulated homes (holdout split)\n\n"
        out += "Means over \(layouts.count * seeds) scenarios (\(layouts.joined(separator: ", ")); \(seeds) seed\(seeds == 1 ? "" : "s") each,"
        out += " seeds 2001 on), scored as above. No constant of the model was chosen on these homes; model designs were"
        out += " compared on them.\n\n"
        return out + meansTable(["roomcast, membership", Self.positionsRow, Self.transmittingMembership,
                                 Self.transmittingPositions, "bermuda", "ceil-nearest", "bound"], sums)
            + "\n³ As in the check split: every node also advertises a beacon of its own.\n"
    }

    static let positionsRow = "roomcast, positions"
    static let transmittingMembership = "roomcast, membership, nodes transmit ³"
    static let transmittingPositions = "roomcast, positions, nodes transmit ³"
    static let transmittingNote = """
        ³ The same homes with every node also advertising a beacon of its own (`roomcast-bench
        simulation --node-beacons`; `advertise:` in each agent's config and `nodes[].beacon` in the
        aggregator's, as the README's set-up step 7 recommends). With positions the aggregator learns
        each receiver's offset from the links between the nodes; without, each node's beacon as the
        others hear it is its room's fingerprint. `bound` and `ceil-nearest` know every receiver's
        true offset; the other Roomcast rows learn none.

        """

    /// A table of the split's means, one row per name in `names` that has scores.
    static func meansTable(_ names: [String], _ sums: [String: Tally]) -> String {
        var out = "| rule | settled | flaps/h | median switch (s) |\n|---|---|---|---|\n"
        for name in names {
            guard let tally = sums[name], tally.n > 0 else { continue }
            out += "| \(name) | " + tally.cell(separator: " | ") + " |\n"
        }
        return out
    }

    /// One part of the decision model taken out, as a change to its constants or to the
    /// user's settings.
    struct Ablation: Sendable {
        let label: String
        let change: @Sendable (inout FusionModel) -> Void
        var settingsChange: @Sendable (inout FusionSettings) -> Void = { _ in }
    }

    /// Each part of the model taken out in turn: what it is worth, on the recordings and on
    /// the check split, in the mode most users run (node membership only).
    static let ablations: [Ablation] = [
        Ablation(label: "as shipped") { _ in },
        Ablation(label: "no motion evidence (links' changes not weighed)") { $0.motionWeight = 0 },
        Ablation(label: "no stillness (rooms change at the moving rate always)") { $0.stillChangeRate = $0.movingChangeRate },
        Ablation(label: "no spot (a still beacon's every second counted anew)") { $0.spotShare = 0 },
        Ablation(label: "no switch cost (the likeliest room is shown)") { $0.switchCost = 0 },
        Ablation(label: "rooms no node hears as likely as the weakest heard") { $0.unheardPenalty = 0 },
        Ablation(label: "every second in full (the nodes' `rssi_sd` not weighed)") { $0.levelVariance = .infinity },
        // The simulated `bound` and `ceil-nearest` declare away the moment a person leaves;
        // this row shows what the default wait costs there and what it buys on a recording.
        Ablation(label: "away after 10 s of silence (`away_timeout_s`, default 30)", change: { _ in },
                 settingsChange: { $0.awayTimeout = 10 }),
    ]

    /// The check split's homes with one node per floor: where one node alone hears a beacon,
    /// which the split's mean hides and which no recording has.
    static let loneNodeLayout = "sparse"

    static func contributions(_ runs: [(name: String, run: ScenarioRun)], _ homes: [SimulatedHome]) throws -> String {
        let simulated = homes.map(\.run)
        let loneNode = homes.filter { $0.layout == loneNodeLayout }.map(\.run)
        var out = "\n## What each part of the model is worth\n\n"
        out += "Node membership only, each part taken out in turn ([fusion.md](fusion.md#the-model)); the check split"
        out += " as above (means, median switch pooled), and apart its homes with one node per floor"
        out += " (`\(loneNodeLayout)`: six of eight rooms have no node, so one node alone often hears a beacon).\n\n"
        out += tableHead("model", runs, extra: ["one node per floor"])
        for ablation in ablations {
            var model = FusionModel.standard
            ablation.change(&model)
            out += try tableRow(ablation.label, runs, simulated, extra: [loneNode], model: model, settings: ablation.settingsChange)
        }
        return out
    }

    /// The agent's RSSI filter is the first stage of every room decision: its lag is part of
    /// every switch. Each row is the agents' `ranging.filter` (docs/ranging.md); every other
    /// setting is the default. Membership rows first, then positions.
    static let agentFilters: [(label: String, config: String?)] = [
        ("as shipped (median of 3, 8 dB²/s)", nil),
        ("median of 5, 4 dB²/s", "ranging:\n  filter: {window: 5, process_noise: 4}\n"),
        ("median of 5, 8 dB²/s", "ranging:\n  filter: {window: 5, process_noise: 8}\n"),
        ("median of 3, 16 dB²/s", "ranging:\n  filter: {window: 3, process_noise: 16}\n"),
    ]

    static func agentFilter(_ runs: [(name: String, run: ScenarioRun)], _ homes: [SimulatedHome],
                            load: (String?) throws -> [(name: String, run: ScenarioRun)]) throws -> String {
        var out = "\n## The agent's RSSI filter\n\n"
        out += "Each node's agent with another `ranging.filter`"
        out += " ([ranging.md](ranging.md#filter-sliding-median--robust-1-d-kalman)), node membership only and then"
        out += " with positions; the check split as above.\n\n"
        out += tableHead("agent filter", runs)
        var membership = "", positions = ""
        for filter in agentFilters {
            let recorded = try filter.config.map(load) ?? runs
            let simulated = try filter.config.map { config in
                try homes.map { home in try awaitResult { try await ScenarioRun.generated(home.generated, agentConfig: config) } }
            } ?? homes.map(\.run)
            membership += try tableRow(filter.label, recorded, simulated)
            positions += try tableRow(filter.label + ", positions", recorded, simulated, positions: true)
        }
        out += membership + positions
        return out
    }

    /// With positions, how fast the signal falls with distance is the site's to say
    /// (`fusion.path_loss_exponent`): what each value gives on each recording and the check split.
    static let exponents = [2.0, 2.5, 3.0]

    static func pathLossExponents(_ runs: [(name: String, run: ScenarioRun)], _ homes: [SimulatedHome]) throws -> String {
        var out = "\n## The path-loss exponent (positions)\n\n"
        out += "With positions, each site's `fusion.path_loss_exponent`"
        out += " ([configuration.md](configuration.md#radio-physics-positions-only)); every other setting is the default;"
        out += " the check split as above (its homes are drawn at "
        out += String(format: "%.1f", RadioModel().pathLossExponent) + ").\n\n"
        out += tableHead("path_loss_exponent", runs)
        let defaultExponent = FusionSettings().pathLossExponent
        for n in exponents {
            let label = String(format: "%.1f", n) + (n == defaultExponent ? " (default)" : "")
            out += try tableRow(label, runs, homes.map(\.run), positions: true) { $0.pathLossExponent = n }
        }
        return out
    }

    /// The head of a table of rows: `first`, each recording, the check split, then `extra`.
    static func tableHead(_ first: String, _ recorded: [(name: String, run: ScenarioRun)], extra: [String] = []) -> String {
        "| \(first) | " + recorded.map(\.name).joined(separator: " | ") + " | check split |"
            + extra.map { " \($0) |" }.joined() + "\n|---|"
            + String(repeating: "---|", count: recorded.count + 1 + extra.count) + "\n"
    }

    /// One row: each recording, then the check split's means and each `extra` group's; node
    /// membership only unless `positions`.
    static func tableRow(_ label: String, _ recorded: [(name: String, run: ScenarioRun)], _ simulated: [ScenarioRun],
                         extra: [[ScenarioRun]] = [], positions: Bool = false, model: FusionModel = .standard,
                         settings change: (inout FusionSettings) -> Void = { _ in }) throws -> String {
        func score(_ run: ScenarioRun) throws -> Score {
            var settings = try run.site(positions: positions).fusion
            change(&settings)
            return try run.fusion(settings, model: model, positions: positions).score
        }
        var cells = try recorded.map { cell(try score($0.run)) }
        for group in [simulated] + extra {
            var tally = Tally()
            for run in group { tally.add(try score(run)) }
            cells.append(tally.cell(separator: " / "))
        }
        return "| \(label) | " + cells.joined(separator: " | ") + " |\n"
    }
}
