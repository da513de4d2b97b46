import Foundation
import RoomcastAgent
import RoomcastAggregator
import RoomcastFusion
import Shared
import Synchronization
import RoomcastConfig
import RoomcastYAML

/// Scores an estimator on what the product does with a scenario, and nothing else: each
/// node's capture through `edge-agent run --source btsnoop:… --speed max --dry-run` (in
/// process, `EdgeAgentCLI.dryRun`), the logs merged as `aggregator replay` merges its files
/// (`ReplayRunner.mergedInputs`), the aggregator core (`AggregatorConfig.makeCore`) run over
/// them by `ReplayRunner.run`, and the presence it publishes scored by `Scorer`. Baselines
/// and candidate engines sit in the same core, behind the same intake and 1 s ticks, so
/// every row of a table is fed the same readings.
public enum Evaluation {
    /// What the agents published for a scenario: each node's `--dry-run` JSONL and their merge.
    public struct Inputs: Sendable {
        /// Per node, in layout order: what `edge-agent --dry-run` printed.
        public var logs: [NodeLog]
        /// The merged lines `aggregator replay` would read from those files, given in that order.
        public var merged: [MessageLogLine]
        /// Lines of the logs that did not decode (none, unless the agent's output format broke):
        /// the first hundred, and how many in all.
        public var badLines: [String]
        public var badLineCount: Int

        /// One node's output.
        public struct NodeLog: Sendable {
            public var node: String
            public var text: String

            public init(node: String, text: String) {
                self.node = node
                self.text = text
            }
        }

        public init(logs: [NodeLog]) {
            self.logs = logs
            var report = ReplayRunner.Report()
            merged = ReplayRunner.mergedInputs(logs: logs.map { (name: $0.node, text: $0.text) }, report: &report)
            badLines = report.badLines
            badLineCount = report.badLineCount
        }

        /// Throws when lines of the agents' own output did not decode: a broken format, and a
        /// score or a teaching from the rest would be of a partial feed.
        public func requireEveryLineDecoded() throws(CaptureError) {
            if let bad = badLines.first {
                throw CaptureError(description: "\(badLineCount) lines of the agents' output do not decode, first: \(bad)")
            }
        }

        /// Beacon readings among the merged lines.
        public func readings(topics: Topics = Topics()) -> Int {
            merged.reduce(0) { n, line in
                if case .nodeBeacon = topics.parse(line.topic) { return n + 1 }
                return n
            }
        }
    }

    /// A capture the agents cannot replay, with why.
    public struct CaptureError: Error, CustomStringConvertible {
        public var description: String
    }

    /// The `edge-agent` command line that replays `node`'s capture of the scenario in
    /// `directory` (with the scenario's `agent.yaml`, when it has one: the phones' IRKs).
    /// The binaries' equivalence test runs exactly these arguments through the executable.
    /// `config` names another agent config instead.
    public static func agentArguments(directory: URL, node: String, config: String? = nil) -> [String] {
        var args = ["run", "--node", node, "--source", "btsnoop:" + capturePath(directory: directory, node: node),
                    "--speed", "max", "--dry-run"]
        let agentYAML = config ?? directory.appendingPathComponent("agent.yaml").path
        if FileManager.default.fileExists(atPath: agentYAML) { args += ["--config", agentYAML] }
        return args
    }

    /// `directory/nodes/<node>.btsnoop`.
    public static func capturePath(directory: URL, node: String) -> String {
        directory.appendingPathComponent("nodes").appendingPathComponent("\(node).btsnoop").path
    }

    /// Runs every node's capture through the edge agent, in process, as `agentArguments` says.
    /// `extraConfig`, YAML, is added to the scenario's agent config (the bench's comparisons of
    /// agent settings, e.g. another `ranging:` filter); the scenario's own must not set its keys.
    public static func runAgents(directory: URL, nodes: [String], extraConfig: String? = nil) async throws -> Inputs {
        for node in nodes where !FileManager.default.fileExists(atPath: capturePath(directory: directory, node: node)) {
            throw CaptureError(description: "\(capturePath(directory: directory, node: node)): no capture for node '\(node)'")
        }
        var config: String?
        if let extraConfig {
            let own = directory.appendingPathComponent("agent.yaml")
            let base = (try? String(contentsOf: own, encoding: .utf8)).map { $0 + "\n" } ?? ""
            let path = FileManager.default.temporaryDirectory.appendingPathComponent("roomcast-agent-\(UUID().uuidString).yaml")
            try (base + extraConfig).write(to: path, atomically: true, encoding: .utf8)
            config = path.path
        }
        defer { if let config { try? FileManager.default.removeItem(atPath: config) } }
        let logs = try await withThrowingTaskGroup(of: Inputs.NodeLog.self) { group in
            for node in nodes {
                let arguments = agentArguments(directory: directory, node: node, config: config)
                group.addTask {
                    let output = OutputBuffer()
                    _ = try await EdgeAgentCLI.dryRun(arguments: arguments) { output.append($0) }
                    return Inputs.NodeLog(node: node, text: output.text)
                }
            }
            var byNode: [String: Inputs.NodeLog] = [:]
            for try await log in group { byNode[log.node] = log }
            return nodes.compactMap { byNode[$0] }
        }
        return Inputs(logs: logs)
    }

    /// The aggregator's config for `scenario` (`ScenarioConfigWriter.siteYAML`: rooms, nodes,
    /// tracked beacons; with or without positions), loaded as `aggregator --config` loads it.
    public static func siteConfig(_ scenario: Scenario, positions: Bool = true,
                                  rxAdjust: [String: Double] = [:]) throws -> AggregatorConfig {
        try ConfigLoader.parse(AggregatorConfig.self,
                               yaml: ScenarioConfigWriter.siteYAML(scenario, positions: positions, rxAdjust: rxAdjust))
    }

    /// The outcome of a replay.
    public struct Result: Sendable {
        public var score: Score
        /// The presence decisions published, per beacon.
        public var timeline: DecisionTimeline
        /// Every line the aggregator published (what `aggregator replay` prints).
        public var published: [MessageLogLine]
    }

    /// Runs `core` over `inputs` as `aggregator replay` does and scores what it published.
    public static func replay<E: PresenceEstimator & Sendable>(scenario: Scenario, inputs: Inputs,
                                                               core: inout AggregatorCore<E>,
                                                               scorer: Scorer = Scorer()) throws -> Result {
        try inputs.requireEveryLineDecoded()
        var report = ReplayRunner.Report()
        var published: [MessageLogLine] = []
        try ReplayRunner.run(core: &core, inputs: inputs.merged, report: &report) { published.append($0) }
        let timeline = timeline(published: published, topics: core.topics)
        return Result(score: scorer.score(timeline, truth: scenario.truth, start: scenario.layout.t0),
                      timeline: timeline, published: published)
    }

    /// Roomcast as `config` sets it up: `aggregator replay --config …`.
    public static func replay(scenario: Scenario, inputs: Inputs, config: AggregatorConfig,
                              scorer: Scorer = Scorer()) throws -> Result {
        var core = config.makeCore()
        return try replay(scenario: scenario, inputs: inputs, core: &core, scorer: scorer)
    }

    /// `estimator` in `config`'s aggregator core instead of the fusion engine.
    public static func replay<E: PresenceEstimator & Sendable>(scenario: Scenario, inputs: Inputs, config: AggregatorConfig,
                                                               estimator: E, scorer: Scorer = Scorer()) throws -> Result {
        var core = config.makeCore(engine: estimator)
        return try replay(scenario: scenario, inputs: inputs, core: &core, scorer: scorer)
    }

    /// The decisions of an `aggregator replay`'s output, under whichever `mqtt.topic_prefix` it
    /// ran with: the prefix of its first presence topic.
    public static func timeline(replayOutput published: [MessageLogLine]) -> DecisionTimeline {
        let marker = Topics(prefix: "").presencePrefix  // "/presence/"
        let prefix = published.lazy.compactMap { line in line.topic.range(of: marker).map { String(line.topic[..<$0.lowerBound]) } }.first
        return timeline(published: published, topics: Topics(prefix: prefix ?? Topics().prefix))
    }

    /// The decisions in an aggregator's output (`aggregator replay` lines): each beacon's
    /// presence message gives its room (nil = away) from the decision's time on.
    public static func timeline(published: [MessageLogLine], topics: Topics = Topics()) -> DecisionTimeline {
        var timeline = DecisionTimeline()
        for line in published {
            guard case .presence = topics.parse(line.topic),
                  let d = try? WireFormat.decode(PresenceDecision.self, from: line.payload) else { continue }
            timeline.record(d.id, room: d.room, at: d.ts)
        }
        return timeline
    }
}

/// Collects what a dry-run sink writes, from whichever thread writes it.
final class OutputBuffer: Sendable {
    private let data = Mutex<Data>(Data())

    func append(_ chunk: Data) { data.withLock { $0.append(chunk) } }

    var text: String { data.withLock { String(decoding: $0, as: UTF8.self) } }
}
