import RoomcastAdvertising
import Shared

/// A simulator run: the scenario (same format as real recordings) plus what only a
/// simulator knows.
public struct GeneratedScenario: Sendable {
    public var scenario: Scenario
    /// "The best any nearest-node rule could do": each second, the room of the node with
    /// the strongest noise-free, perfectly calibrated signal (away when away).
    public var bound: DecisionTimeline
    /// Receiver offsets the simulation applied, dB (what calibration would have to undo).
    public var receiverOffsets: [String: Double]
    /// What each transmitter (tracked or not) puts on the air, by the id its packets carry.
    public var advertisers: [BeaconID: SimulatedAdvertiser]
    /// The phones' Identity Resolving Keys: what an agent needs to track them (`agent.yaml`).
    public var irks: [IdentityResolvingKey]
    /// Metres between floors (node z in `site.yaml` is absolute).
    public var floorHeight: Double
    /// When nodes heard nothing (`SimulationSettings.outages`), by node then time.
    public var outages: [NodeOutage]

    public init(scenario: Scenario, bound: DecisionTimeline, receiverOffsets: [String: Double],
                advertisers: [BeaconID: SimulatedAdvertiser] = [:], irks: [IdentityResolvingKey] = [],
                floorHeight: Double = 3.0, outages: [NodeOutage] = []) {
        self.scenario = scenario
        self.bound = bound
        self.receiverOffsets = receiverOffsets
        self.advertisers = advertisers
        self.irks = irks
        self.floorHeight = floorHeight
        self.outages = outages
    }

    /// The bound scored like any estimator.
    public func boundScore(scorer: Scorer = Scorer()) -> Score {
        scorer.score(bound, truth: scenario.truth, start: scenario.layout.t0)
    }

    /// The agent's tracking config for this scenario: the phones' IRKs, every beacon tracked.
    public var advertisingConfig: AdvertisingConfig {
        AdvertisingConfig(irks: irks.map { IRKConfig(name: $0.name, key: Hex.encode($0.key)) })
    }
}
