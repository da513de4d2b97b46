import Foundation
import RoomcastAggregator
import RoomcastFusion
import Shared

/// A scenario with what its nodes' edge agents published for it (`Evaluation.runAgents`),
/// ready to score Roomcast and the baselines on those same readings.
public struct ScenarioRun: Sendable {
    public var scenario: Scenario
    public var inputs: Evaluation.Inputs

    public init(scenario: Scenario, inputs: Evaluation.Inputs) {
        self.scenario = scenario
        self.inputs = inputs
    }

    /// Loads the scenario in `directory` and replays its `nodes/<node>.btsnoop` through the
    /// agents. Captures stored gzipped (`<node>.btsnoop.gz`, the test fixtures) are unpacked to
    /// a temporary folder first, as a user would gunzip them. `agentConfig` is added to the
    /// agents' config (`Evaluation.runAgents`).
    public static func load(directory: URL, agentConfig: String? = nil) async throws -> ScenarioRun {
        let scenario = try Scenario.load(from: directory)
        let nodes = scenario.layout.nodes.map(\.name)
        let fm = FileManager.default
        let missing = nodes.filter { !fm.fileExists(atPath: Evaluation.capturePath(directory: directory, node: $0)) }
        guard !missing.isEmpty else {
            let inputs = try await Evaluation.runAgents(directory: directory, nodes: nodes, extraConfig: agentConfig)
            return ScenarioRun(scenario: scenario, inputs: inputs)
        }
        let unpacked = fm.temporaryDirectory.appendingPathComponent("roomcast-captures-\(UUID().uuidString)")
        defer { try? fm.removeItem(at: unpacked) }
        try fm.createDirectory(at: unpacked.appendingPathComponent("nodes"), withIntermediateDirectories: true)
        for node in nodes {
            let plain = Evaluation.capturePath(directory: directory, node: node)
            let target = URL(fileURLWithPath: Evaluation.capturePath(directory: unpacked, node: node))
            if fm.fileExists(atPath: plain) {
                try fm.copyItem(atPath: plain, toPath: target.path)
            } else if fm.fileExists(atPath: plain + ".gz") {
                try Gzip.decompress(file: URL(fileURLWithPath: plain + ".gz")).write(to: target)
            } else {
                throw Evaluation.CaptureError(description: "\(plain): no capture for node '\(node)' (nor \(plain).gz); "
                                              + "`roomcast-sim capture --scenario \(directory.path)` writes the captures from raw.jsonl")
            }
        }
        let agentYAML = directory.appendingPathComponent("agent.yaml")
        if fm.fileExists(atPath: agentYAML.path) {
            try fm.copyItem(at: agentYAML, to: unpacked.appendingPathComponent("agent.yaml"))
        }
        let inputs = try await Evaluation.runAgents(directory: unpacked, nodes: nodes, extraConfig: agentConfig)
        return ScenarioRun(scenario: scenario, inputs: inputs)
    }

    /// A recording kept as its packets alone (`raw.jsonl`, no `nodes/`): its captures are written
    /// first, as `roomcast-sim capture` writes them, in a temporary copy, then replayed as `load`
    /// does. A directory with captures is loaded as it is.
    public static func loadWritingCaptures(directory: URL, agentConfig: String? = nil) async throws -> ScenarioRun {
        let fm = FileManager.default
        guard !fm.fileExists(atPath: directory.appendingPathComponent("nodes").path) else {
            return try await load(directory: directory, agentConfig: agentConfig)
        }
        let copy = fm.temporaryDirectory.appendingPathComponent("roomcast-recording-\(UUID().uuidString)")
        defer { try? fm.removeItem(at: copy) }
        try fm.copyItem(at: directory, to: copy)
        try RecordedAdvertisers.writeCaptures(of: Scenario.load(from: copy), in: copy)
        return try await load(directory: copy, agentConfig: agentConfig)
    }

    /// A generated scenario, written as `roomcast-sim generate` writes it (captures and
    /// configs) to a temporary folder, replayed through the agents, and the folder removed.
    public static func generated(_ generated: GeneratedScenario, agentConfig: String? = nil) async throws -> ScenarioRun {
        let fm = FileManager.default
        let directory = fm.temporaryDirectory.appendingPathComponent("roomcast-scenario-\(UUID().uuidString)")
        defer { try? fm.removeItem(at: directory) }
        try DirectoryScenarioWriter(directory: directory).write(generated)
        let nodes = generated.scenario.layout.nodes.map(\.name)
        let inputs = try await Evaluation.runAgents(directory: directory, nodes: nodes, extraConfig: agentConfig)
        return ScenarioRun(scenario: generated.scenario, inputs: inputs)
    }

    /// The aggregator's config for this scenario (`Evaluation.siteConfig`).
    public func site(positions: Bool = true, rxAdjust: [String: Double] = [:]) throws -> AggregatorConfig {
        try Evaluation.siteConfig(scenario, positions: positions, rxAdjust: rxAdjust)
    }

    /// Roomcast with the default config: `aggregator replay --config site.yaml`; `rxAdjust` per node
    /// as the site's `nodes[].rx_adjust` (what `aggregator calibrate` writes).
    public func roomcast(positions: Bool = true, rxAdjust: [String: Double] = [:]) throws -> Evaluation.Result {
        try Evaluation.replay(scenario: scenario, inputs: inputs, config: site(positions: positions, rxAdjust: rxAdjust))
    }

    /// The fusion engine with `settings` in the aggregator core.
    public func fusion(_ settings: FusionSettings, model: FusionModel = .standard, positions: Bool = true,
                       rxAdjust: [String: Double] = [:]) throws -> Evaluation.Result {
        try fusionWithEngine(settings, model: model, positions: positions, rxAdjust: rxAdjust).result
    }

    /// `fusion`, and the engine as it is at the end (diagnostics: what it learned).
    public func fusionWithEngine(_ settings: FusionSettings, model: FusionModel = .standard, positions: Bool = true,
                                 rxAdjust: [String: Double] = [:]) throws -> (result: Evaluation.Result, engine: FusionEngine) {
        let config = try site(positions: positions, rxAdjust: rxAdjust)
        var core = config.makeCore(engine: FusionEngine(site: config.partitionedSite, settings: settings, model: model))
        let result = try Evaluation.replay(scenario: scenario, inputs: inputs, core: &core)
        return (result, core.engine)
    }

    /// Any estimator in the aggregator core.
    public func replay<E: PresenceEstimator & Sendable>(_ estimator: E, positions: Bool = true) throws -> Evaluation.Result {
        try Evaluation.replay(scenario: scenario, inputs: inputs, config: site(positions: positions), estimator: estimator)
    }

    /// A baseline rule in the aggregator core, fed the same readings as Roomcast.
    public func baseline(_ baseline: Baseline, positions: Bool = true) throws -> Evaluation.Result {
        let config = try site(positions: positions)
        return try Evaluation.replay(scenario: scenario, inputs: inputs, config: config,
                                     estimator: AnyPresenceEstimator(baseline.make(site: config.partitionedSite)))
    }
}

/// Any estimator as one concrete type, for the aggregator core's generic engine.
public struct AnyPresenceEstimator: PresenceEstimator, Sendable {
    public private(set) var base: any PresenceEstimator & Sendable

    public init(_ base: any PresenceEstimator & Sendable) { self.base = base }

    public mutating func ingest(_ reading: BeaconReading, now: Double) { base.ingest(reading, now: now) }
    public mutating func nodeStatus(_ node: String, online: Bool, now: Double) { base.nodeStatus(node, online: online, now: now) }
    public mutating func tick(now: Double) -> [PresenceDecision] { base.tick(now: now) }
    public func decision(for id: BeaconID) -> PresenceDecision? { base.decision(for: id) }
    public func isTracking(_ id: BeaconID) -> Bool { base.isTracking(id) }
    public mutating func hearingRestored(at now: Double) { base.hearingRestored(at: now) }
    public mutating func takeDropped() -> [DroppedBeacon] { base.takeDropped() }
    public var capacityUse: CapacityUse? { base.capacityUse }
    public var counters: FusionCounters { base.counters }
    public func switchEvidenceSince(for id: BeaconID) -> Double? { base.switchEvidenceSince(for: id) }
}
