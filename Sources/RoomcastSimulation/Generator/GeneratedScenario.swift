/// A simulator run: the scenario (same format as real recordings) plus what only a
/// simulator knows.
public struct GeneratedScenario: Sendable {
    public var scenario: Scenario
    /// "The best any nearest-node rule could do": each second, the room of the node with
    /// the strongest noise-free, perfectly calibrated signal (away when away).
    public var bound: DecisionTimeline
    /// Receiver offsets the simulation applied, dB (what calibration would have to undo).
    public var receiverOffsets: [String: Double]

    public init(scenario: Scenario, bound: DecisionTimeline, receiverOffsets: [String: Double]) {
        self.scenario = scenario
        self.bound = bound
        self.receiverOffsets = receiverOffsets
    }

    /// The bound scored like any estimator.
    public func boundScore(scorer: Scorer = Scorer()) -> Score {
        scorer.score(bound, truth: scenario.truth, start: scenario.layout.t0)
    }
}
