import Foundation
import Shared
import Testing
@testable import RoomcastSimulation
import RoomcastCLI

/// `roomcast-sim`'s command line: golden help, and the commands run in-process.
@Suite("Simulation command")
struct SimulationCommandTests {
    let spec = SimulatorCommand.spec

    @Test("root help")
    func rootHelp() {
        #expect(spec.helpText() == """
            OVERVIEW: Simulates homes and scores room-presence estimators.

            USAGE: roomcast-sim <subcommand>

            OPTIONS:
              --version               Show the version.
              -h, --help              Show help information.

            SUBCOMMANDS:
              generate                Write a simulated scenario directory.
              score                   Score Roomcast and the baselines on a scenario,
                                      through the edge agent and the aggregator.
              labels                  Print the learn messages a user walking each room
                                      would send, from a scenario's truth.
              capture                 Write a recorded scenario's nodes/<node>.btsnoop from
                                      its raw.jsonl, so the edge agents can replay it.
              check                   Replay every node's btsnoop capture with agent.yaml
                                      and compare it with raw.jsonl.
              site                    Print the aggregator's config (site.yaml) for a
                                      scenario: its rooms, nodes and beacons.

              See 'roomcast-sim <subcommand> --help' for detailed help.

            """)
    }

    @Test("generate help")
    func generateHelp() {
        #expect(spec.helpText(path: ["generate"]) == """
            OVERVIEW: Write a simulated scenario directory.

            Writes layout.json, beacons.json, truth.jsonl, raw.jsonl, bound.jsonl,
            outages.jsonl (when nodes go silent), nodes/<node>.btsnoop (what each node's
            controller delivered; btmon -r reads them), site.yaml (the aggregator's rooms,
            nodes and beacons) and agent.yaml (the phones' IRKs).

            USAGE: roomcast-sim generate --out <dir> [--layout <name>] [--seed <n>]
                   [--duration <s>] [--noise <level>] [--phones <n>] [--rotation <s>]
                   [--node-beacons] [--walk-out] [--placement <where>] [--mean-stay <s>]
                   [--outages <n>] [--day <n>] [--teaching-tour] [--gzip] [--no-btsnoop]
                   [--no-configs]

            OPTIONS:
              --out <dir>             Output directory.
              --layout <name>         Floor plan: house, flat, office, cottage, openplan,
                                      townhouse, sparse, house-outages. (default: house)
              --seed <n>              Random seed; the same seed gives the same files.
                                      (default: 1)
              --duration <s>          Seconds to simulate. (default: 900)
              --noise <level>         Radio noise: low, normal or high. (default: normal)
              --phones <n>            People who also carry a phone (rotating addresses).
                                      (default: 1)
              --rotation <s>          Seconds between a phone's address changes. (default:
                                      900)
              --node-beacons          Every node also transmits an iBeacon of its own
                                      (calibration).
              --walk-out              People leave on foot through the exit room's outer
                                      wall, heard as they go.
              --placement <where>     Nodes off-centre (as they end up) or centred (as an
                                      installer would). (default: off-centre)
              --mean-stay <s>         People's mean stay in a room, seconds. (default: 90)
              --outages <n>           Nodes that go silent for minutes at a time (agent
                                      down, radio stuck). (default: 0; house-outages: 2)
              --day <n>               Another day in the same home: the same nodes, radio
                                      and tags, other walks. (default: 0)
              --teaching-tour         One person, alone in the home, walks every room in
                                      turn for 30 s (to teach the rooms).
              --gzip                  Write raw.jsonl.gz instead of raw.jsonl.
              --no-btsnoop            Skip nodes/<node>.btsnoop.
              --no-configs            Skip site.yaml and agent.yaml.
              -h, --help              Show help information.

            """)
    }

    @Test("score and check help")
    func scoreAndCheckHelp() {
        #expect(spec.helpText(path: ["score"]) == """
            OVERVIEW: Score Roomcast and the baselines on a scenario, through the edge agent
            and the aggregator.

            Replays every nodes/<node>.btsnoop as `edge-agent run --node NODE --source
            btsnoop:FILE --speed max --dry-run` does (with agent.yaml when the scenario has
            one), merges the output as `aggregator replay` does, and runs the aggregator
            core with the scenario's site (default config) over it: Roomcast's engine, then
            each baseline rule on the same readings. With --decisions, scores the output of
            a real `aggregator replay` instead.

            USAGE: roomcast-sim score --scenario <dir> [--estimator <name>] [--no-positions]
                   [--decisions <file>] [--sessions <list>] [--learned <file>]
                   [--train-from <dir>] [--train-sessions <list>] [--save-learned <file>]
                   [--rx-adjust <node=dB,…>] [--json]

            OPTIONS:
              --scenario <dir>        Scenario directory.
              --estimator <name>      roomcast, one of nearest-latest, mqtt-room,
                                      ema-nearest, bermuda, bound (simulated scenarios
                                      only), or all. (default: all)
              --no-positions          Give the aggregator rooms and node membership only (no
                                      polygons or positions).
              --decisions <file>      Score this `aggregator replay` output instead of
                                      replaying.
              --sessions <list>       Score only these sessions (1,2,…: stretches of truth
                                      between silent gaps).
              --learned <file>        Roomcast starts from the learned rooms in this state
                                      file.
              --train-from <dir>      Teach Roomcast first on this scenario's labels (as a
                                      user walking each room would give them).
              --train-sessions <list>
                                      Teach only from these sessions (of --train-from, or of
                                      --scenario without it).
              --save-learned <file>   Write the learned rooms used to this state file.
              --rx-adjust <node=dB,…>
                                      Roomcast's site gives these nodes this rx_adjust (as
                                      `aggregator calibrate` would); the baselines are
                                      unchanged. Not with taught rooms or --decisions.
              --json                  Print machine-readable JSON.
              -h, --help              Show help information.

            """)
        #expect(spec.helpText(path: ["check"]) == """
            OVERVIEW: Replay every node's btsnoop capture with agent.yaml and compare it
            with raw.jsonl.

            USAGE: roomcast-sim check --scenario <dir>

            OPTIONS:
              --scenario <dir>        Scenario directory (written by generate).
              -h, --help              Show help information.

            """)
    }

    /// Parses and runs `arguments` in-process; returns the exit code, stdout and stderr.
    func run(_ arguments: [String]) async -> (ExitCode, String, String) {
        final class Sink: @unchecked Sendable { var out = "", err = "" }  // used from this task only
        let sink = Sink()
        switch CommandLineTool.decide(spec, arguments: arguments, output: { sink.out += $0 }, errorOutput: { sink.err += $0 }) {
        case .exit(let code): return (code, sink.out, sink.err)
        case .run(let command):
            let code = await SimulatorCommand.run(command, output: { sink.out += $0 }, errorOutput: { sink.err += $0 })
            return (code, sink.out, sink.err)
        }
    }

    @Test("labels help")
    func labelsHelp() {
        #expect(spec.helpText(path: ["labels"]) == """
            OVERVIEW: Print the learn messages a user walking each room would send, from a
            scenario's truth.

            One message at the start of every true room stay of at least --min-span seconds,
            teaching that room for the stay less --margin at each end (at most 600 s), as
            JSONL lines `aggregator replay` reads beside the agents' logs.

            USAGE: roomcast-sim labels --scenario <dir> [--sessions <list>] [--min-span <s>]
                   [--margin <s>]

            OPTIONS:
              --scenario <dir>        Scenario directory.
              --sessions <list>       Only these sessions (1,2,…: stretches of truth between
                                      silent gaps).
              --min-span <s>          Shortest stay taught. (default: 20)
              --margin <s>            Left out at each end of a stay. (default: 3)
              -h, --help              Show help information.

            """)
    }

    @Test("generate, check and score run end to end")
    func generateCheckScore() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("roomcast-sim-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: dir) }
        let (code, out, err) = await run(["generate", "--layout", "flat", "--seed", "2", "--duration", "60",
                                          "--phones", "2", "--rotation", "20", "--out", dir.path])
        #expect(code == .success, "\(err)")
        #expect(out.contains("6 nodes"))
        for file in ["layout.json", "beacons.json", "truth.jsonl", "raw.jsonl", "bound.jsonl", "site.yaml", "agent.yaml",
                     "nodes/hall-pi.btsnoop", "nodes/study-pi.btsnoop"] {
            #expect(FileManager.default.fileExists(atPath: dir.appendingPathComponent(file).path), "\(file)")
        }
        let (checkCode, checkOut, checkErr) = await run(["check", "--scenario", dir.path])
        #expect(checkCode == .success, "\(checkErr)")
        #expect(checkOut.contains("ok: the captures decode to raw.jsonl"))
        let (scoreCode, scoreOut, _) = await run(["score", "--scenario", dir.path, "--estimator", "bound", "--json"])
        #expect(scoreCode == .success)
        #expect(scoreOut.contains("\"estimator\":\"bound\""))

        // A capture that no longer matches raw.jsonl is bad data (65).
        let raw = dir.appendingPathComponent("raw.jsonl")
        var lines = try String(decoding: Data(contentsOf: raw), as: UTF8.self).split(separator: "\n").map(String.init)
        let i = try #require(lines.firstIndex { $0.contains("ibeacon:") })
        lines[i] = lines[i].replacingOccurrences(of: "\"rssi\": -", with: "\"rssi\": -1")
        try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: raw)
        let (badCode, _, badErr) = await run(["check", "--scenario", dir.path])
        #expect(badCode == .dataError)
        #expect(badErr.contains("first difference"))
    }

    @Test("score ends as its inputs say: a bad agent.yaml 78, no bound or unreadable decisions 65, options --decisions ignores 64")
    func scoreExitCodes() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("roomcast-sim-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: dir) }
        let (code, _, err) = await run(["generate", "--layout", "flat", "--seed", "3", "--duration", "60", "--out", dir.path])
        #expect(code == .success, "\(err)")
        let agentConfig = dir.appendingPathComponent("agent.yaml")
        let original = try Data(contentsOf: agentConfig)
        try (original + Data("bogus_key: 1\n".utf8)).write(to: agentConfig)
        let (badConfig, _, badConfigErr) = await run(["score", "--scenario", dir.path, "--estimator", "roomcast"])
        #expect(badConfig == .config && badConfigErr.contains("bogus_key"), "\(badConfigErr)")
        try original.write(to: agentConfig)

        let garbage = dir.appendingPathComponent("garbage.jsonl")
        try Data("not a replay\n{\"ts\":\n".utf8).write(to: garbage)
        let (badDecisions, _, badDecisionsErr) = await run(["score", "--scenario", dir.path, "--decisions", garbage.path])
        #expect(badDecisions == .dataError && badDecisionsErr.contains("2 lines are not replay output lines"), "\(badDecisionsErr)")
        let (mixed, _, mixedErr) = await run(["score", "--scenario", dir.path, "--decisions", garbage.path, "--sessions", "1"])
        #expect(mixed == .usage && mixedErr.contains("not with --sessions"), "\(mixedErr)")

        try FileManager.default.removeItem(at: dir.appendingPathComponent("bound.jsonl"))
        let (noBound, _, noBoundErr) = await run(["score", "--scenario", dir.path, "--estimator", "bound"])
        #expect(noBound == .dataError && noBoundErr.contains("no bound.jsonl"), "\(noBoundErr)")
    }

    @Test("capture writes captures from raw.jsonl that replay to the same decisions as the recording's own")
    func captureFromRawPackets() async throws {
        let fm = FileManager.default
        let dir = fm.temporaryDirectory.appendingPathComponent("roomcast-sim-\(UUID().uuidString)")
        defer { try? fm.removeItem(at: dir) }
        let fixture = try SimulationFixtures.directory("kolakowski-robot")
        try fm.createDirectory(at: dir, withIntermediateDirectories: true)
        for file in ["layout.json", "beacons.json", "truth.jsonl", "raw.jsonl.gz"] {
            try fm.copyItem(at: fixture.appendingPathComponent(file), to: dir.appendingPathComponent(file))
        }
        let (missingCode, _, missingErr) = await run(["score", "--scenario", dir.path, "--estimator", "roomcast"])
        #expect(missingCode == .dataError)
        #expect(missingErr.contains("no capture for node") && missingErr.contains("roomcast-sim capture --scenario \(dir.path)"), "\(missingErr)")

        let (code, out, err) = await run(["capture", "--scenario", dir.path])
        #expect(code == .success, "\(err)")
        #expect(out.contains("wrote 6 captures"), "\(out)")
        // The recording's own captures (another tool's, from the tag's own address) and these carry
        // the same frames at the same times with the same RSSI: the agents publish the same
        // readings (but for the address) and the aggregator decides the same.
        let recorded = try await SimulationFixtures.run("kolakowski-robot")
        let captured = try await ScenarioRun.load(directory: dir)
        struct Heard: Equatable { var node: String; var ts: Double; var rssi: Int; var filtered: Double }
        func readings(_ run: ScenarioRun) throws -> [Heard] {
            try run.inputs.merged.filter { $0.topic.contains("/beacons/") }.map {
                let r = try BeaconReading.decodeWire($0.payload)
                return Heard(node: r.node, ts: r.ts, rssi: r.rssi, filtered: r.rssiFiltered)
            }
        }
        let (mine, theirs) = (try readings(captured), try readings(recorded))
        #expect(mine.count > 1000)
        #expect(mine.count == theirs.count)
        #expect(zip(mine, theirs).first { $0 != $1 } == nil)
        let decisions = (try captured.roomcast(positions: false).published, try recorded.roomcast(positions: false).published)
        #expect(decisions.0.count > 10)
        #expect(decisions.0 == decisions.1)

        // A beacon no frame carries is bad data (65), named.
        let beacons = dir.appendingPathComponent("beacons.json")
        let text = try String(decoding: Data(contentsOf: beacons), as: UTF8.self)
        let id = try #require(text.split(separator: "\"").first { $0.hasPrefix("ibeacon:") })
        try Data(text.replacingOccurrences(of: String(id), with: "mac:c0ffee000001").utf8).write(to: beacons)
        let (badCode, _, badErr) = await run(["capture", "--scenario", dir.path])
        #expect(badCode == .dataError)
        #expect(badErr.contains("beacon mac:c0ffee000001: only ibeacon and eddystone ids"), "\(badErr)")
    }

    @Test("score --rx-adjust reaches Roomcast's site: a node made 40 dB hot wins beacons in the other rooms")
    func scoreWithRxAdjust() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("roomcast-sim-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: dir) }
        let (code, _, err) = await run(["generate", "--layout", "flat", "--seed", "2", "--duration", "300", "--out", dir.path])
        #expect(code == .success, "\(err)")
        func accuracy(_ extra: [String]) async throws -> Double {
            let (code, out, err) = await run(["score", "--scenario", dir.path, "--estimator", "roomcast", "--no-positions", "--json"] + extra)
            #expect(code == .success, "\(err)")
            struct Line: Decodable { struct Score: Decodable { var settledAccuracy: Double }; var score: Score }
            return try JSONDecoder().decode(Line.self, from: Data(out.utf8)).score.settledAccuracy
        }
        let plain = try await accuracy([])
        let hot = try await accuracy(["--rx-adjust", "hall-pi=40"])
        #expect(plain > 0.6, "\(plain)")
        #expect(hot < plain - 0.2, "hall-pi 40 dB hot: \(hot) against \(plain)")
        #expect(try await accuracy(["--rx-adjust", "hall-pi=0"]) == plain)
        let (unknownCode, _, unknownErr) = await run(["score", "--scenario", dir.path, "--rx-adjust", "attic-pi=2"])
        #expect(unknownCode == .usage)
        #expect(unknownErr.contains("has no node 'attic-pi'"), "\(unknownErr)")
        let (badCode, _, badErr) = await run(["score", "--scenario", dir.path, "--rx-adjust", "hall-pi=loud"])
        #expect(badCode == .usage)
        #expect(badErr.contains("takes node=dB pairs"), "\(badErr)")
        // Taught levels carry the corrections they were taught with: the two do not mix.
        let (taughtCode, _, taughtErr) = await run(["score", "--scenario", dir.path, "--rx-adjust", "hall-pi=2", "--train-sessions", "1"])
        #expect(taughtCode == .usage)
        #expect(taughtErr.contains("not with --train-sessions"), "\(taughtErr)")
    }

    @Test("--mean-stay makes people stay longer: fewer room changes in the truth")
    func meanStay() async throws {
        func truthSpans(_ extra: [String]) async throws -> Int {
            let dir = FileManager.default.temporaryDirectory.appendingPathComponent("roomcast-sim-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: dir) }
            let (code, _, err) = await run(["generate", "--layout", "house", "--seed", "3", "--duration", "1200",
                                            "--no-btsnoop", "--no-configs", "--out", dir.path] + extra)
            #expect(code == .success, "\(err)")
            let truth = try String(decoding: Data(contentsOf: dir.appendingPathComponent("truth.jsonl")), as: UTF8.self)
            return truth.split(separator: "\n").count
        }
        let (usual, long) = (try await truthSpans([]), try await truthSpans(["--mean-stay", "900"]))
        #expect(long * 3 < usual, "\(long) truth spans with a 900-s mean stay against \(usual) with 90 s")
    }

    @Test("usage errors exit 64 and name the problem", arguments: [
        (["generate"], "missing required option '--out <dir>'"),
        (["generate", "--out", "/nonexistent/roomcast-sim-out", "--seed", "x"], "invalid value 'x' for '--seed <n>'"),
        (["generate", "--out", "/nonexistent/roomcast-sim-out", "--layout", "castle"], "unknown layout 'castle'"),
        (["generate", "--out", "/nonexistent/roomcast-sim-out", "--noise", "loud"], "--noise must be low, normal or high"),
        (["generate", "--out", "/nonexistent/roomcast-sim-out", "--mean-stay", "0"], "--mean-stay must be a positive number"),
        (["frobnicate"], "unknown subcommand 'frobnicate'"),
    ])
    func usageErrors(arguments: [String], message: String) async {
        let (code, _, err) = await run(arguments)
        #expect(code == .usage)
        #expect(err.contains(message), "\(err)")
    }
}
