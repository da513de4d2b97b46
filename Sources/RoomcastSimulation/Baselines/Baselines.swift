import RoomcastFusion
import Shared

/// A named baseline rule and how a replay feeds it (its reference semantics).
public struct Baseline: Sendable {
    public var name: String
    /// One line for reports.
    public var summary: String
    /// Replay options that reproduce the rule's reference semantics.
    public var options: Evaluation.Options
    private let factory: @Sendable (SiteModel) -> any PresenceEstimator

    public init(name: String, summary: String, options: Evaluation.Options = Evaluation.Options(),
                make: @escaping @Sendable (SiteModel) -> any PresenceEstimator) {
        self.name = name
        self.summary = summary
        self.options = options
        self.factory = make
    }

    /// A fresh estimator for `site`.
    public func make(site: SiteModel) -> any PresenceEstimator { factory(site) }

    /// Replays `scenario` through this baseline with its own options.
    public func run(scenario: Scenario) -> Score {
        Evaluation.run(scenario: scenario, estimator: make(site: scenario.layout.siteModel()), options: options)
    }
}

/// The baseline estimators Roomcast is scored against (docs/simulator.md).
public enum Baselines {
    /// Every baseline, in report order.
    public static let all: [Baseline] = [
        Baseline(name: "nearest-latest", summary: "room of the node with the strongest latest reading, every second") {
            NearestLatestEstimator(site: $0)
        },
        Baseline(name: "mqtt-room",
                 summary: "HA mqtt_room: latest raw distance per node ≤1/s; closer room, or any room after 5 s",
                 options: {
                     var o = Evaluation.Options()
                     o.tickAfterEveryReading = true  // HA decides on every message
                     return o
                 }()) { site in
            var e = MQTTRoomEstimator(site: site)
            e.rawDistance = true
            return e
        },
        Baseline(name: "ema-nearest", summary: "nearest node on an EMA (α 0.3) of every packet's RSSI, every second",
                 options: {
                     var o = Evaluation.Options()
                     o.publishInterval = 0  // the EMA sees every packet
                     return o
                 }()) { EMANearestEstimator(site: $0, alpha: 0.3) },
        Baseline(name: "bermuda",
                 summary: "Bermuda-style: challenger 30 % closer, or 15 % closer and worst of 5 s beats best") {
            BermudaEstimator(site: $0)
        },
    ]

    /// Names of `all`.
    public static var names: [String] { all.map(\.name) }

    /// The baseline called `name`, if any.
    public static func named(_ name: String) -> Baseline? { all.first { $0.name == name } }

    /// A fresh baseline estimator, or nil for an unknown name.
    public static func make(_ name: String, site: SiteModel) -> (any PresenceEstimator)? {
        named(name)?.make(site: site)
    }
}
