import Foundation
import Testing
import RoomcastAggregator
import RoomcastSimulation
import Shared
import TestSupport

/// The figures the project reports are the figures users get: the in-process evaluation
/// (`ScenarioRun`) decides exactly what the real binaries decide — `edge-agent run --speed
/// max --dry-run` per node, `aggregator replay --config site.yaml` over their output, scored
/// by `roomcast-sim score --decisions` — decision by decision, on the Kolakowski robot run.
@Suite("One evaluation path")
struct EvaluationPathTests {
    @Test("in process equals edge-agent --dry-run + aggregator replay + the scorer", arguments: [true, false])
    func inProcessEqualsTheBinaries(positions: Bool) async throws {
        let bin = try BuiltProducts.directory()
        let fixture = try SimulationFixtures.directory("kolakowski-robot")
        let scenario = try SimulationFixtures.scenario("kolakowski-robot")
        let work = FileManager.default.temporaryDirectory.appendingPathComponent("roomcast-evalpath-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: work.appendingPathComponent("nodes"), withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: work) }
        // The fixture keeps its captures gzipped; a user would gunzip them first.
        let nodes = scenario.layout.nodes.map(\.name)
        for node in nodes {
            let gz = URL(fileURLWithPath: Evaluation.capturePath(directory: fixture, node: node) + ".gz")
            try Gzip.decompress(file: gz).write(to: URL(fileURLWithPath: Evaluation.capturePath(directory: work, node: node)))
        }

        // The binaries.
        var siteArguments = ["site", "--scenario", fixture.path]
        if !positions { siteArguments.append("--no-positions") }
        let site = work.appendingPathComponent("site.yaml")
        try Data(try await ChildProcess.run("\(bin)/roomcast-sim", siteArguments, in: work.path).utf8).write(to: site)
        var logs: [String] = []
        var agentOutput: [String: String] = [:]
        for node in nodes {
            let out = try await ChildProcess.run("\(bin)/edge-agent", Evaluation.agentArguments(directory: work, node: node),
                                                 in: work.path)
            let path = work.appendingPathComponent("\(node).jsonl")
            try Data(out.utf8).write(to: path)
            logs.append(path.path)
            agentOutput[node] = out
        }
        let replayed = try await ChildProcess.run("\(bin)/aggregator", ["replay", "--config", site.path] + logs, in: work.path)
        let decisions = work.appendingPathComponent("decisions.jsonl")
        try Data(replayed.utf8).write(to: decisions)
        let scored = try await ChildProcess.run("\(bin)/roomcast-sim",
                                                ["score", "--scenario", fixture.path, "--decisions", decisions.path, "--json"],
                                                in: work.path)
        struct Line: Decodable { var score: Score }
        let binaryScore = try JSONDecoder().decode(Line.self, from: Data(scored.utf8)).score

        // In process.
        let run = try await SimulationFixtures.run("kolakowski-robot")
        let result = try await offPool { try run.roomcast(positions: positions) }

        // The agents printed the same lines (telemetry names the capture's path, which differs)…
        func withoutTelemetry(_ text: String) -> [Substring] { text.split(separator: "\n").filter { !$0.contains("/telemetry\"") } }
        for log in run.inputs.logs {
            #expect(withoutTelemetry(log.text) == withoutTelemetry(agentOutput[log.node] ?? ""), "\(log.node)'s dry run differs")
        }
        // …the aggregator published the same decisions, one by one…
        var published: [MessageLogLine] = []
        for line in replayed.split(separator: "\n") { published.append(try MessageLogLine.decode(String(line))) }
        let binaryTimeline = Evaluation.timeline(published: published)
        let ids = Set(binaryTimeline.changes.keys).union(result.timeline.changes.keys).sorted()
        #expect(!ids.isEmpty)
        for id in ids {
            let ours = result.timeline.changes[id] ?? [], theirs = binaryTimeline.changes[id] ?? []
            #expect(ours.count == theirs.count, "\(id): \(ours.count) decisions in process, \(theirs.count) by the binaries")
            for (a, b) in zip(ours, theirs) { #expect(a == b, "\(id)") }
        }
        #expect(result.published == published)
        // …and the scorer gives the same figures.
        #expect(result.score == binaryScore, "\(result.score.summary) vs \(binaryScore.summary)")
    }

    @Test("agents' output that does not decode is no score of a partial feed")
    func undecodableAgentOutputIsAnError() throws {
        let scenario = try SimulationFixtures.scenario("kolakowski-robot")
        let inputs = Evaluation.Inputs(logs: [.init(node: "anchor1", text: "{\"ts\":1,\"topic\":\"roomcast/nodes/anchor1/status\",\"payload\":\"online\",\"retain\":true}\nnot json\n")])
        var core = AggregatorConfig().makeCore()
        #expect(throws: Evaluation.CaptureError.self) { try Evaluation.replay(scenario: scenario, inputs: inputs, core: &core) }
    }

    /// The bench compares agent settings (docs/results.md, the agent's RSSI filter) by adding a
    /// config to the agents' own: it must reach every node's agent.
    @Test("a config added to the agents reaches every node's agent")
    func addedAgentConfigReachesTheAgents() async throws {
        let fixture = try SimulationFixtures.directory("kolakowski-robot")
        let unfiltered = try await ScenarioRun.load(directory: fixture, agentConfig: "ranging:\n  filter: {kind: none}\n")
        let shipped = try await SimulationFixtures.run("kolakowski-robot")
        struct Payload: Decodable { var rssi: Double?; var rssi_filtered: Double? }
        func readings(_ run: ScenarioRun) throws -> [Payload] {
            try run.inputs.merged.filter { $0.topic.contains("/beacons/") }.map {
                try JSONDecoder().decode(Payload.self, from: Data($0.payload))
            }
        }
        let raw = try readings(unfiltered), filtered = try readings(shipped)
        #expect(raw.count > 1000)
        let differing = raw.filter { $0.rssi == nil || $0.rssi != $0.rssi_filtered }
        #expect(differing.isEmpty, "\(differing.count) of \(raw.count), e.g. \(differing.prefix(3))")
        // The shipped filter does filter: most readings differ from their newest packet.
        #expect(filtered.filter { $0.rssi != $0.rssi_filtered }.count * 2 > filtered.count)
    }
}
