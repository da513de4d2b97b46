import Foundation
import RoomcastAggregator
import RoomcastFusion
import Shared
import RoomcastAgent
import RoomcastCLI
import RoomcastConfig
import RoomcastYAML

/// `roomcast-sim`: its command-line declaration and what each subcommand does, in the
/// library so the help text and the commands are tested without spawning the executable.
public enum SimulatorCommand {
    /// The declarative command table (`--help` is rendered from it).
    public static let spec = CommandSpec(
        "roomcast-sim",
        abstract: "Simulates homes and scores room-presence estimators.",
        version: RoomcastVersion.current,
        subcommands: [generate, score, labels, capture, check, site])

    /// `generate`'s options.
    enum GenerateOptions {
        static let out = Option<String?>("out", value: "dir", help: "Output directory.", required: true)
        static let layout = Option<String>("layout", value: "name", help: "Floor plan: \(FloorPlan.names.joined(separator: ", ")).", default: "house")
        static let seed = Option<UInt64>("seed", value: "n", help: "Random seed; the same seed gives the same files.", default: 1)
        static let duration = Option<Double>("duration", value: "s", help: "Seconds to simulate.", default: 900)
        static let noise = Option<String>("noise", value: "level", help: "Radio noise: low, normal or high.", default: "normal")
        static let phones = Option<Int>("phones", value: "n", help: "People who also carry a phone (rotating addresses).", default: 1)
        static let rotation = Option<Double>("rotation", value: "s", help: "Seconds between a phone's address changes.", default: 900)
        static let nodeBeacons = Flag("node-beacons", help: "Every node also transmits an iBeacon of its own (calibration).")
        static let walkOut = Flag("walk-out", help: "People leave on foot through the exit room's outer wall, heard as they go.")
        static let placement = Option<String>("placement", value: "where", help: "Nodes off-centre (as they end up) or centred (as an installer would).",
                                              default: "off-centre")
        static let meanStay = Option<Double>("mean-stay", value: "s", help: "People's mean stay in a room, seconds.", default: 90)
        // No value stands for "the layout's": house-outages has two silent nodes.
        static let outages = Option<Int?>("outages", value: "n", help: "Nodes that go silent for minutes at a time (agent down, radio stuck).",
                                          shownDefault: "0; house-outages: 2")
        static let day = Option<Int>("day", value: "n", help: "Another day in the same home: the same nodes, radio and tags, other walks.", default: 0)
        static let teachingTour = Flag("teaching-tour", help: "One person, alone in the home, walks every room in turn for 30 s (to teach the rooms).")
        static let gzip = Flag("gzip", help: "Write raw.jsonl.gz instead of raw.jsonl.")
        static let noBtsnoop = Flag("no-btsnoop", help: "Skip nodes/<node>.btsnoop.")
        static let noConfigs = Flag("no-configs", help: "Skip site.yaml and agent.yaml.")

        /// In the order help lists them.
        static let all: [any OptionDeclaration] = [out, layout, seed, duration, noise, phones, rotation, nodeBeacons, walkOut,
                                                   placement, meanStay, outages, day, teachingTour, gzip, noBtsnoop, noConfigs]
    }

    /// `score`'s options (`labels`, `check` and `site` share `--scenario`).
    enum ScoreOptions {
        static let scenario = Option<String?>("scenario", value: "dir", help: "Scenario directory.", required: true)
        static let estimator = Option<String>("estimator", value: "name",
                                              help: "roomcast, one of \(Baselines.names.joined(separator: ", ")), bound (simulated scenarios only), or all.",
                                              default: "all")
        static let noPositions = Flag("no-positions", help: "Give the aggregator rooms and node membership only (no polygons or positions).")
        static let decisions = Option<String?>("decisions", value: "file", help: "Score this `aggregator replay` output instead of replaying.")
        static let sessions = Option<String?>("sessions", value: "list", help: "Score only these sessions (1,2,…: stretches of truth between silent gaps).")
        static let learned = Option<String?>("learned", value: "file", help: "Roomcast starts from the learned rooms in this state file.")
        static let trainFrom = Option<String?>("train-from", value: "dir", help: "Teach Roomcast first on this scenario's labels (as a user walking each room would give them).")
        static let trainSessions = Option<String?>("train-sessions", value: "list", help: "Teach only from these sessions (of --train-from, or of --scenario without it).")
        static let saveLearned = Option<String?>("save-learned", value: "file", help: "Write the learned rooms used to this state file.")
        static let rxAdjust = Option<String?>("rx-adjust", value: "node=dB,…",
                                              help: "Roomcast's site gives these nodes this rx_adjust (as `aggregator calibrate` would); the baselines are unchanged. Not with taught rooms or --decisions.")

        /// In the order help lists them.
        static let all: [any OptionDeclaration] = [scenario, estimator, noPositions, decisions, sessions, learned, trainFrom,
                                                   trainSessions, saveLearned, rxAdjust, StandardOptions.json]
    }

    /// `labels`' options.
    enum LabelsOptions {
        static let sessions = Option<String?>("sessions", value: "list", help: "Only these sessions (1,2,…: stretches of truth between silent gaps).")
        static let minSpan = Option<Double>("min-span", value: "s", help: "Shortest stay taught.", default: 20)
        static let margin = Option<Double>("margin", value: "s", help: "Left out at each end of a stay.", default: 3)
    }

    static let checkScenario = Option<String?>("scenario", value: "dir", help: "Scenario directory (written by generate).", required: true)
    static let siteNoPositions = Flag("no-positions", help: "Rooms and node membership only (no polygons or positions).")

    static let generate = CommandSpec(
        "generate",
        abstract: "Write a simulated scenario directory.",
        discussion: """
            Writes layout.json, beacons.json, truth.jsonl, raw.jsonl, bound.jsonl, \
            outages.jsonl (when nodes go silent), nodes/<node>.btsnoop (what each node's controller delivered; btmon -r reads them), \
            site.yaml (the aggregator's rooms, nodes and beacons) and agent.yaml (the phones' IRKs).
            """,
        options: GenerateOptions.all) { command, out in
        await reporting(out) { try runGenerate(command, output: out.output); return .success }
    }

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
        options: ScoreOptions.all) { command, out in
        await reporting(out) { try await runScore(command, output: out.output); return .success }
    }

    static let labels = CommandSpec(
        "labels",
        abstract: "Print the learn messages a user walking each room would send, from a scenario's truth.",
        discussion: """
            One message at the start of every true room stay of at least --min-span seconds, \
            teaching that room for the stay less --margin at each end (at most 600 s), as JSONL \
            lines `aggregator replay` reads beside the agents' logs.
            """,
        options: [ScoreOptions.scenario, LabelsOptions.sessions, LabelsOptions.minSpan, LabelsOptions.margin]) { command, out in
        await reporting(out) { try runLabels(command, output: out.output); return .success }
    }

    static let capture = CommandSpec(
        "capture",
        abstract: "Write a recorded scenario's nodes/<node>.btsnoop from its raw.jsonl, so the edge agents can replay it.",
        discussion: """
            For recordings that come as RSSI logs (a time, a node, a beacon and an RSSI per packet): \
            each packet becomes the LE Advertising Report its node's controller would have delivered, \
            at the packet's time and with its RSSI, carrying the beacon's frame (iBeacon or \
            Eddystone-UID, calibrated to its measured_power in beacons.json). Existing captures are \
            replaced.
            """,
        options: [ScoreOptions.scenario]) { command, out in
        await reporting(out) { try runCapture(command, output: out.output); return .success }
    }

    static let check = CommandSpec(
        "check",
        abstract: "Replay every node's btsnoop capture with agent.yaml and compare it with raw.jsonl.",
        options: [checkScenario]) { command, out in
        await reporting(out) { try await runCheck(command, output: out.output, errorOutput: out.errorOutput) }
    }

    static let site = CommandSpec(
        "site",
        abstract: "Print the aggregator's config (site.yaml) for a scenario: its rooms, nodes and beacons.",
        options: [ScoreOptions.scenario, siteNoPositions]) { command, out in
        await reporting(out) {
            let scenario = try Scenario.load(from: URL(fileURLWithPath: command[ScoreOptions.scenario] ?? ""))
            out.output(ScenarioConfigWriter.siteYAML(scenario, positions: !command[siteNoPositions]))
            return .success
        }
    }

    /// Runs a parsed command; text goes to `output`, problems to `errorOutput`.
    public static func run(_ command: ParsedCommand, output: @escaping @Sendable (String) -> Void,
                           errorOutput: @escaping @Sendable (String) -> Void) async -> ExitCode {
        await CommandLineTool.run(command, output: CommandOutput(output: output, errorOutput: errorOutput))
    }

    /// A scenario's files or captures that cannot be read, replayed or written (exit 65).
    static func isBadData(_ error: any Error) -> Bool {
        error is Scenario.LoadError || error is CaptureReplay.ReplayError || error is Evaluation.CaptureError
            || error is RecordedAdvertisers.UnsupportedBeacon || error is BTSnoopScenarioWriter.UnwritablePacket
    }

    /// Runs a subcommand's body; its errors go to `out.errorOutput` with the exit code each kind ends with.
    static func reporting(_ out: CommandOutput, _ body: () async throws -> ExitCode) async -> ExitCode {
        let errorOutput = out.errorOutput
        do {
            return try await body()
        } catch let e as UsageError {
            errorOutput(e.description + "\n")
            return .usage
        } catch let e where isBadData(e) {
            errorOutput("error: \(e)\n")
            return .dataError
        } catch let e as ConfigError {
            errorOutput("error: \(e)\n")
            return .config
        } catch let e as any ExitCodeProviding {
            // The agent run in process (a scenario's agent.yaml, a capture) ends as the binary would.
            errorOutput("error: \(e)\n")
            return e.exitCode
        } catch {
            errorOutput("error: \(error)\n")
            return .failure
        }
    }

    static func runGenerate(_ c: ParsedCommand, output: (String) -> Void) throws {
        typealias O = GenerateOptions
        let out = c[O.out] ?? ""
        let layoutName = c[O.layout]
        guard let plan = FloorPlan.named(layoutName) else {
            throw c.usageError("unknown layout '\(layoutName)'; known: \(FloorPlan.names.joined(separator: ", "))")
        }
        let seed = try c[O.seed]
        let duration = try c[O.duration]
        guard duration > 0 else { throw c.usageError("--duration must be a positive number of seconds") }
        guard let noise = RadioModel.Noise(rawValue: c[O.noise]) else {
            throw c.usageError("--noise must be low, normal or high")
        }
        let phones = try c[O.phones]
        guard phones >= 0 else { throw c.usageError("--phones must be 0 or more") }
        let rotation = try c[O.rotation]
        guard rotation > 0 else { throw c.usageError("--rotation must be a positive number of seconds") }
        var settings = SimulationSettings(plan: plan, seed: seed, duration: duration)
        settings.radio = RadioModel(noise: noise)
        settings.phones = phones
        settings.addressRotation = rotation
        settings.nodeBeacons = c[O.nodeBeacons]
        settings.walkOut = c[O.walkOut]
        let where_ = c[O.placement]
        guard let placement = NodePlacement(rawValue: where_) else {
            throw c.usageError("--placement must be off-centre or centred, not '\(where_)'")
        }
        settings.placement = placement
        let meanStay = try c[O.meanStay]
        guard meanStay > 0 else { throw c.usageError("--mean-stay must be a positive number of seconds") }
        settings.meanStay = meanStay
        if let silent = try c[O.outages] {
            guard silent >= 0 else { throw c.usageError("--outages must be 0 or more") }
            settings.outages.nodes = silent
        }
        settings.day = try c[O.day]
        guard settings.day >= 0 else { throw c.usageError("--day must be 0 or more") }
        if c[O.teachingTour] { settings.makeTeachingDay() }
        let generated = ScenarioSimulator(settings: settings).run()
        try DirectoryScenarioWriter(directory: URL(fileURLWithPath: out), gzip: c[O.gzip],
                                    btsnoop: !c[O.noBtsnoop], configs: !c[O.noConfigs]).write(generated)
        output("wrote \(out): \(generated.scenario.packets.count) packets, \(generated.scenario.truth.count) truth spans, "
            + "\(generated.scenario.layout.nodes.count) nodes\n")
    }

    static func runScore(_ c: ParsedCommand, output: (String) -> Void) async throws {
        typealias O = ScoreOptions
        let dir = URL(fileURLWithPath: c[O.scenario] ?? "")
        let which = c[O.estimator]
        let positions = !c[O.noPositions]
        let known = ["roomcast"] + Baselines.names + ["bound"]
        guard which == "all" || known.contains(which) else {
            throw c.usageError("unknown estimator '\(which)'; known: \(known.joined(separator: ", ")), all")
        }
        func emit(_ scenario: Scenario, _ name: String, _ score: Score) throws {
            if c[StandardOptions.json] {
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
        if c[O.rxAdjust] != nil, let other = [O.decisions, O.learned, O.trainFrom, O.trainSessions].first(where: { c[$0] != nil }) {
            // Taught levels carry the corrections they were taught with, and a replay's output the ones it ran with.
            throw c.usageError("--\(O.rxAdjust.spec.name) scores untaught Roomcast on a replay of its own; not with --\(other.spec.name)")
        }
        if let file = c[O.decisions] {
            // A replay's output is scored as it is: what would pick sessions, teach or run the agents does not apply.
            let given = [O.sessions, O.learned, O.trainFrom, O.trainSessions, O.saveLearned].first { c[$0] != nil }?.spec.name
            if let other = given ?? (c[O.noPositions] ? O.noPositions.spec.name : nil) {
                throw c.usageError("--\(O.decisions.spec.name) scores a replay's output as it is; not with --\(other)")
            }
            let scenario = try Scenario.load(from: dir)
            var report = ReplayRunner.Report()
            let published: [MessageLogLine]
            do { published = try ReplayRunner.mergedInputs(paths: [file], report: &report) } catch {
                throw Scenario.LoadError(description: "\(file): cannot read (\(error))")
            }
            if let first = report.badLines.first {
                throw Scenario.LoadError(description: "\(report.badLineCount) lines are not replay output lines, first: \(first)")
            }
            let timeline = Evaluation.timeline(replayOutput: published)
            guard !timeline.changes.isEmpty else {
                throw Scenario.LoadError(description: "\(file): no presence decisions (<prefix>/presence/<id>): not the output of aggregator replay")
            }
            try emit(scenario, "replay", Scorer().score(timeline, truth: scenario.truth, start: scenario.layout.t0))
            return
        }
        let names = which == "all" ? known : [which]
        // The pairs are checked before the agents replay the scenario, the nodes once it is loaded.
        let rxAdjust = try rxAdjustments(c, O.rxAdjust)
        let run = try await ScenarioRun.load(directory: dir)
        let nodes = Set(run.scenario.layout.nodes.map(\.name))
        if let unknown = rxAdjust.keys.sorted().first(where: { !nodes.contains($0) }) {
            throw c.usageError("--\(O.rxAdjust.spec.name): \(run.scenario.name) has no node '\(unknown)'; its nodes: \(nodes.sorted().joined(separator: ", "))")
        }
        let sessions = try sessionList(c, O.sessions, run.scenario)
        var learned: LearnedRooms?
        if let file = c[O.learned] {
            do {
                guard let read = try LearnedRoomsStore(path: file).load() else { throw Scenario.LoadError(description: "\(file): no such file") }
                learned = read
            } catch let e as LearnedRoomsStore.Failure { throw Scenario.LoadError(description: e.description) }
        }
        if c[O.trainFrom] != nil || c[O.trainSessions] != nil {
            var teacher = run
            if let other = c[O.trainFrom] { teacher = try await ScenarioRun.load(directory: URL(fileURLWithPath: other)) }
            learned = try teacher.train(sessions: try sessionList(c, O.trainSessions, teacher.scenario), positions: positions,
                                        from: learned ?? LearnedRooms())
        }
        if let file = c[O.saveLearned] {
            do { try LearnedRoomsStore(path: file).save(learned ?? LearnedRooms()) } catch { throw Scenario.LoadError(description: error.description) }
        }
        var scored = run
        scored.scenario.truth = run.truth(sessions: sessions)
        for name in names {
            switch name {
            case "bound":
                guard let bound = try DecisionTimeline.load(boundIn: dir) else {
                    // A recording has no bound: `all` leaves it out, asking for it alone is an error.
                    if which == "all" { continue }
                    throw Scenario.LoadError(description: "\(dir.path): no bound.jsonl (recordings have no bound; simulated scenarios do)")
                }
                try emit(scored.scenario, name, Scorer().score(bound, truth: scored.scenario.truth, start: run.scenario.layout.t0))
            case "roomcast":
                try emit(scored.scenario, name, try scored.roomcast(positions: positions, rxAdjust: rxAdjust).score)
                if let learned {
                    try emit(scored.scenario, "roomcast-taught", try run.roomcast(positions: positions, learned: learned, sessions: sessions).score)
                }
            default:
                try emit(scored.scenario, name, try scored.baseline(Baselines.named(name)!, positions: positions).score)
            }
        }
    }

    /// `--rx-adjust anchor1=2,anchor5=-1`: dB per node name, empty when not given.
    static func rxAdjustments(_ c: ParsedCommand, _ option: Option<String?>) throws -> [String: Double] {
        guard let text = c[option] else { return [:] }
        var out: [String: Double] = [:]
        for part in text.split(separator: ",", omittingEmptySubsequences: false) {
            let pair = part.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            guard pair.count == 2, !pair[0].isEmpty, let db = Double(pair[1]), db.isFinite, abs(db) <= 60 else {
                throw c.usageError("--\(option.spec.name) takes node=dB pairs separated by commas (anchor1=2,anchor5=-1.5; at most ±60 dB), not '\(part)'")
            }
            out[pair[0]] = db
        }
        return out
    }

    /// `--sessions 1,2`: session numbers of `scenario`, nil when not given.
    static func sessionList(_ c: ParsedCommand, _ sessionsOption: Option<String?>, _ scenario: Scenario) throws -> Set<Int>? {
        guard let text = c[sessionsOption] else { return nil }
        let option = sessionsOption.spec.name
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
        let scenario = try Scenario.load(from: URL(fileURLWithPath: c[ScoreOptions.scenario] ?? ""))
        let minSpan = try c[LabelsOptions.minSpan]
        let margin = try c[LabelsOptions.margin]
        guard minSpan >= 5, margin >= 0, margin < 300 else { throw c.usageError("--min-span must be at least 5 and --margin 0…300") }
        var truth = scenario.truth
        if let sessions = try sessionList(c, LabelsOptions.sessions, scenario) { truth = ScenarioSessions(truth: truth).truth(truth, in: sessions) }
        for line in TruthLabels(minimumSpan: minSpan, margin: margin).messages(truth) { output(line.encoded() + "\n") }
    }

    static func runCapture(_ c: ParsedCommand, output: (String) -> Void) throws {
        let dir = URL(fileURLWithPath: c[ScoreOptions.scenario] ?? "")
        let scenario = try Scenario.load(from: dir)
        try RecordedAdvertisers.writeCaptures(of: scenario, in: dir)
        output("wrote \(scenario.layout.nodes.count) captures in \(dir.appendingPathComponent("nodes").path): "
            + "\(scenario.packets.count) packets\n")
    }

    static func runCheck(_ c: ParsedCommand, output: (String) -> Void, errorOutput: (String) -> Void) async throws -> ExitCode {
        let dir = URL(fileURLWithPath: c[checkScenario] ?? "")
        let scenario = try Scenario.load(from: dir)
        let nodes = scenario.layout.nodes.map(\.name)
        var overrides = Overrides()
        // agent.yaml is shared by every node; the node name only matters for validation here.
        overrides.set("node", to: nodes.first ?? "node", from: "--node")
        let agent = try ConfigLoader.load(AgentConfig.self, from: dir.appendingPathComponent("agent.yaml").path,
                                          overrides: overrides)
        let result = try await CaptureReplay.run(directory: dir, nodes: nodes, config: agent.advertising)
        for (node, notice) in result.notices.sorted(by: { $0.key < $1.key }) { errorOutput("warning: \(node): \(notice)\n") }
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
