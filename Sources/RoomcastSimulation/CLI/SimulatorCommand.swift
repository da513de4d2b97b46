import Foundation
import RoomcastAggregator
import RoomcastFusion
import Shared

/// `roomcast-sim`: its command-line declaration and what each subcommand does, in the
/// library so the help text and the commands are tested without spawning the executable.
public enum SimulatorCommand {
    /// The declarative command table (`--help` is rendered from it).
    public static let spec = CommandSpec(
        "roomcast-sim",
        abstract: "Simulates homes and scores room-presence estimators.",
        version: RoomcastVersion.current,
        subcommands: [generate, score, labels, check, site])

    static let generate = CommandSpec(
        "generate",
        abstract: "Write a simulated scenario directory.",
        discussion: """
            Writes layout.json, beacons.json, truth.jsonl, raw.jsonl, bound.jsonl, \
            outages.jsonl (when nodes go silent), nodes/<node>.btsnoop (what each node's controller delivered; btmon -r reads them), \
            site.yaml (the aggregator's rooms, nodes and beacons) and agent.yaml (the phones' IRKs).
            """,
        options: [
            .option("out", value: "dir", help: "Output directory.", required: true),
            .option("layout", value: "name", help: "Floor plan: \(FloorPlan.names.joined(separator: ", ")).", default: "house"),
            .option("seed", value: "n", help: "Random seed; the same seed gives the same files.", default: "1"),
            .option("duration", value: "s", help: "Seconds to simulate.", default: "900"),
            .option("noise", value: "level", help: "Radio noise: low, normal or high.", default: "normal"),
            .option("phones", value: "n", help: "People who also carry a phone (rotating addresses).", default: "1"),
            .option("rotation", value: "s", help: "Seconds between a phone's address changes.", default: "900"),
            .flag("node-beacons", help: "Every node also transmits an iBeacon of its own (calibration)."),
            .flag("walk-out", help: "People leave on foot through the exit room's outer wall, heard as they go."),
            .option("placement", value: "where", help: "Nodes off-centre (as they end up) or centred (as an installer would).",
                    default: "off-centre"),
            .option("mean-stay", value: "s", help: "People's mean stay in a room, seconds.", default: "90"),
            // No value stands for "the layout's": house-outages has two silent nodes.
            .option("outages", value: "n", help: "Nodes that go silent for minutes at a time (agent down, radio stuck).",
                    default: "0; house-outages: 2"),
            .flag("gzip", help: "Write raw.jsonl.gz instead of raw.jsonl."),
            .flag("no-btsnoop", help: "Skip nodes/<node>.btsnoop."),
            .flag("no-configs", help: "Skip site.yaml and agent.yaml."),
        ])

    static let score = CommandSpec(
        "score",
        abstract: "Score Roomcast and the baselines on a scenario, through the edge agent and the aggregator.",
        discussion: """
            Replays every nodes/<node>.btsnoop as `edge-agent run --node NODE --source btsnoop:FILE \
            --speed max --dry-run` does (with agent.yaml when the scenario has one), merges the \
            output as `aggregator replay` does, and runs the aggregator core with the scenario's \
            site (default config) over it: Roomcast's engine, then each baseline rule on the same \
            readings. With --decisions, scores the output of a real `aggregator replay` instead.
            """,
        options: [
            .option("scenario", value: "dir", help: "Scenario directory.", required: true),
            .option("estimator", value: "name",
                    help: "roomcast, one of \(Baselines.names.joined(separator: ", ")), bound (simulated scenarios only), or all.",
                    default: "all"),
            .flag("no-positions", help: "Give the aggregator rooms and node membership only (no polygons or positions)."),
            .option("decisions", value: "file", help: "Score this `aggregator replay` output instead of replaying."),
            .option("sessions", value: "list", help: "Score only these sessions (1,2,…: stretches of truth between silent gaps)."),
            .option("learned", value: "file", help: "Roomcast starts from the learned rooms in this state file."),
            .option("train-from", value: "dir", help: "Teach Roomcast first on this scenario's labels (as a user walking each room would give them)."),
            .option("train-sessions", value: "list", help: "Teach only from these sessions (of --train-from, or of --scenario without it)."),
            .option("save-learned", value: "file", help: "Write the learned rooms used to this state file."),
            StandardOptions.json,
        ])

    static let labels = CommandSpec(
        "labels",
        abstract: "Print the learn messages a user walking each room would send, from a scenario's truth.",
        discussion: """
            One message at the start of every true room stay of at least --min-span seconds, \
            teaching that room for the stay less --margin at each end (at most 600 s), as JSONL \
            lines `aggregator replay` reads beside the agents' logs.
            """,
        options: [
            .option("scenario", value: "dir", help: "Scenario directory.", required: true),
            .option("sessions", value: "list", help: "Only these sessions (1,2,…: stretches of truth between silent gaps)."),
            .option("min-span", value: "s", help: "Shortest stay taught.", default: "20"),
            .option("margin", value: "s", help: "Left out at each end of a stay.", default: "3"),
        ])

    static let check = CommandSpec(
        "check",
        abstract: "Replay every node's btsnoop capture with agent.yaml and compare it with raw.jsonl.",
        options: [
            .option("scenario", value: "dir", help: "Scenario directory (written by generate).", required: true),
        ])

    static let site = CommandSpec(
        "site",
        abstract: "Print the aggregator's config (site.yaml) for a scenario: its rooms, nodes and beacons.",
        options: [
            .option("scenario", value: "dir", help: "Scenario directory.", required: true),
            .flag("no-positions", help: "Rooms and node membership only (no polygons or positions)."),
        ])

    /// Runs a parsed command; text goes to `output`, problems to `errorOutput`.
    public static func run(_ command: ParsedCommand, output: @escaping (String) -> Void,
                           errorOutput: @escaping (String) -> Void) async -> ExitCode {
        do {
            switch command.command {
            case "generate": try runGenerate(command, output: output)
            case "score": try await runScore(command, output: output)
            case "labels": try runLabels(command, output: output)
            case "check": return try await runCheck(command, output: output, errorOutput: errorOutput)
            case "site":
                let scenario = try Scenario.load(from: URL(fileURLWithPath: command.option("scenario") ?? ""))
                output(ScenarioConfigWriter.siteYAML(scenario, positions: !command.flag("no-positions")))
            default: throw command.usageError("missing subcommand; expected one of: generate, score, labels, check, site")
            }
            return .success
        } catch let e as UsageError {
            errorOutput(e.description + "\n")
            return .usage
        } catch let e as Scenario.LoadError {
            errorOutput("error: \(e.description)\n")
            return .dataError
        } catch let e as CaptureReplay.ReplayError {
            errorOutput("error: \(e.description)\n")
            return .dataError
        } catch let e as Evaluation.CaptureError {
            errorOutput("error: \(e.description)\n")
            return .dataError
        } catch let e as ConfigError {
            errorOutput("error: \(e)\n")
            return .config
        } catch {
            errorOutput("error: \(error)\n")
            return .failure
        }
    }

    static func runGenerate(_ c: ParsedCommand, output: (String) -> Void) throws {
        let out = c.option("out") ?? ""
        let layoutName = c.option("layout") ?? "house"
        guard let plan = FloorPlan.named(layoutName) else {
            throw c.usageError("unknown layout '\(layoutName)'; known: \(FloorPlan.names.joined(separator: ", "))")
        }
        let seed = try c.option("seed", as: UInt64.self) ?? 1
        let duration = try c.option("duration", as: Double.self) ?? 900
        guard duration > 0 else { throw c.usageError("--duration must be a positive number of seconds") }
        guard let noise = RadioModel.Noise(rawValue: c.option("noise") ?? "normal") else {
            throw c.usageError("--noise must be low, normal or high")
        }
        let phones = try c.option("phones", as: Int.self) ?? 1
        guard phones >= 0 else { throw c.usageError("--phones must be 0 or more") }
        let rotation = try c.option("rotation", as: Double.self) ?? 900
        guard rotation > 0 else { throw c.usageError("--rotation must be a positive number of seconds") }
        var settings = SimulationSettings(plan: plan, seed: seed, duration: duration)
        settings.radio = RadioModel(noise: noise)
        settings.phones = phones
        settings.addressRotation = rotation
        settings.nodeBeacons = c.flag("node-beacons")
        settings.walkOut = c.flag("walk-out")
        let where_ = c.option("placement") ?? "off-centre"
        guard let placement = NodePlacement(rawValue: where_) else {
            throw c.usageError("--placement must be off-centre or centred, not '\(where_)'")
        }
        settings.placement = placement
        let meanStay = try c.option("mean-stay", as: Double.self) ?? 90
        guard meanStay > 0 else { throw c.usageError("--mean-stay must be a positive number of seconds") }
        settings.meanStay = meanStay
        if let silent = try c.option("outages", as: Int.self) {
            guard silent >= 0 else { throw c.usageError("--outages must be 0 or more") }
            settings.outages.nodes = silent
        }
        let generated = ScenarioSimulator(settings: settings).run()
        try DirectoryScenarioWriter(directory: URL(fileURLWithPath: out), gzip: c.flag("gzip"),
                                    btsnoop: !c.flag("no-btsnoop"), configs: !c.flag("no-configs")).write(generated)
        output("wrote \(out): \(generated.scenario.packets.count) packets, \(generated.scenario.truth.count) truth spans, "
            + "\(generated.scenario.layout.nodes.count) nodes\n")
    }

    static func runScore(_ c: ParsedCommand, output: (String) -> Void) async throws {
        let dir = URL(fileURLWithPath: c.option("scenario") ?? "")
        let which = c.option("estimator") ?? "all"
        let positions = !c.flag("no-positions")
        let known = ["roomcast"] + Baselines.names + ["bound"]
        guard which == "all" || known.contains(which) else {
            throw c.usageError("unknown estimator '\(which)'; known: \(known.joined(separator: ", ")), all")
        }
        func emit(_ scenario: Scenario, _ name: String, _ score: Score) throws {
            if c.flag("json") {
                struct Line: Encodable { var scenario: String; var estimator: String; var positions: Bool; var score: Score }
                let enc = JSONEncoder()
                enc.outputFormatting = [.sortedKeys]
                let line = Line(scenario: scenario.name, estimator: name, positions: positions, score: score)
                output(String(decoding: try enc.encode(line), as: UTF8.self) + "\n")
            } else {
                output("\(name.padding(toLength: 16, withPad: " ", startingAt: 0)) \(score.summary)  (settled n=\(score.settledSamples), "
                    + "flaps \(score.flaps), switches \(score.switchLatencies.count), missed \(score.missedSwitches), "
                    + "moves while away \(score.movesWhileAway))\n")
            }
        }
        if let file = c.option("decisions") {
            let scenario = try Scenario.load(from: dir)
            var report = ReplayRunner.Report()
            let published: [MessageLogLine]
            do { published = try ReplayRunner.mergedInputs(paths: [file], report: &report) } catch {
                throw Scenario.LoadError(description: "\(file): cannot read (\(error))")
            }
            let timeline = Evaluation.timeline(published: published)
            try emit(scenario, "replay", Scorer().score(timeline, truth: scenario.truth, start: scenario.layout.t0))
            return
        }
        let names = which == "all" ? known : [which]
        let run = try await ScenarioRun.load(directory: dir)
        let sessions = try sessionList(c, "sessions", run.scenario)
        var learned: LearnedRooms?
        if let file = c.option("learned") {
            do {
                guard let read = try LearnedRoomsStore(path: file).load() else { throw Scenario.LoadError(description: "\(file): no such file") }
                learned = read
            } catch let e as LearnedRoomsStore.Failure { throw Scenario.LoadError(description: e.description) }
        }
        if c.option("train-from") != nil || c.option("train-sessions") != nil {
            var teacher = run
            if let other = c.option("train-from") { teacher = try await ScenarioRun.load(directory: URL(fileURLWithPath: other)) }
            learned = try teacher.train(sessions: try sessionList(c, "train-sessions", teacher.scenario), positions: positions,
                                        from: learned ?? LearnedRooms())
        }
        if let file = c.option("save-learned") {
            do { try LearnedRoomsStore(path: file).save(learned ?? LearnedRooms()) } catch { throw Scenario.LoadError(description: error.description) }
        }
        var scored = run
        scored.scenario.truth = run.truth(sessions: sessions)
        for name in names {
            switch name {
            case "bound":
                guard let bound = try DecisionTimeline.load(boundIn: dir) else { continue }
                try emit(scored.scenario, name, Scorer().score(bound, truth: scored.scenario.truth, start: run.scenario.layout.t0))
            case "roomcast":
                try emit(scored.scenario, name, try scored.roomcast(positions: positions).score)
                if let learned {
                    try emit(scored.scenario, "roomcast-taught", try run.roomcast(positions: positions, learned: learned, sessions: sessions).score)
                }
            default:
                try emit(scored.scenario, name, try scored.baseline(Baselines.named(name)!, positions: positions).score)
            }
        }
    }

    /// `--sessions 1,2`: session numbers of `scenario`, nil when not given.
    static func sessionList(_ c: ParsedCommand, _ option: String, _ scenario: Scenario) throws -> Set<Int>? {
        guard let text = c.option(option) else { return nil }
        var sessions = Set<Int>()
        for part in text.split(separator: ",", omittingEmptySubsequences: false) {
            guard let n = Int(part.trimmingCharacters(in: .whitespaces)) else {
                throw c.usageError("--\(option) takes session numbers separated by commas (1,2), not '\(text)'")
            }
            sessions.insert(n)
        }
        let known = ScenarioSessions(truth: scenario.truth)
        let unknown = known.unknown(sessions)
        guard unknown.isEmpty else {
            throw c.usageError("--\(option): \(scenario.name) has \(known.spans.count) session\(known.spans.count == 1 ? "" : "s"), not \(unknown.map(String.init).joined(separator: ", "))")
        }
        return sessions
    }

    static func runLabels(_ c: ParsedCommand, output: (String) -> Void) throws {
        let scenario = try Scenario.load(from: URL(fileURLWithPath: c.option("scenario") ?? ""))
        let minSpan = try c.option("min-span", as: Double.self) ?? 20
        let margin = try c.option("margin", as: Double.self) ?? 3
        guard minSpan >= 5, margin >= 0, margin < 300 else { throw c.usageError("--min-span must be at least 5 and --margin 0…300") }
        var truth = scenario.truth
        if let sessions = try sessionList(c, "sessions", scenario) { truth = ScenarioSessions(truth: truth).truth(truth, in: sessions) }
        for line in TruthLabels(minimumSpan: minSpan, margin: margin).messages(truth) { output(line.encoded() + "\n") }
    }

    static func runCheck(_ c: ParsedCommand, output: (String) -> Void, errorOutput: (String) -> Void) async throws -> ExitCode {
        let dir = URL(fileURLWithPath: c.option("scenario") ?? "")
        let scenario = try Scenario.load(from: dir)
        let nodes = scenario.layout.nodes.map(\.name)
        var overrides = Overrides()
        // agent.yaml is shared by every node; the node name only matters for validation here.
        overrides.set("node", to: nodes.first ?? "node", from: "--node")
        let agent = try ConfigLoader.load(AgentConfig.self, from: dir.appendingPathComponent("agent.yaml").path,
                                          overrides: overrides)
        let result = try await CaptureReplay.run(directory: dir, nodes: nodes, config: agent.advertising)
        let trackedIDs = Set(scenario.beacons.map(\.id))
        let expected = scenario.packets.filter { trackedIDs.contains($0.id) }
        let untracked = scenario.packets.count - expected.count
        let heardUntracked = result.untracked.values.reduce(0, +)
        // raw.jsonl only carries `mac` for rotating addresses; compare it where it has one.
        let same = result.packets.count == expected.count
            && zip(result.packets, expected).allSatisfy { a, b in
                a.t == b.t && a.node == b.node && a.id == b.id && a.rssi == b.rssi && (b.mac == nil || a.mac == b.mac)
            }
        output("\(nodes.count) captures: \(result.packets.count) tracked reports (raw.jsonl: \(expected.count)), "
            + "\(heardUntracked) untracked (raw.jsonl: \(untracked))\n")
        guard same, heardUntracked == untracked else {
            if let i = zip(result.packets, expected).enumerated().first(where: { $0.element.0 != $0.element.1 })?.offset {
                errorOutput("first difference at packet \(i): capture \(result.packets[i]), raw.jsonl \(expected[i])\n")
            }
            errorOutput("error: the captures do not match raw.jsonl\n")
            return .dataError
        }
        output("ok: the captures decode to raw.jsonl\n")
        return .success
    }
}
