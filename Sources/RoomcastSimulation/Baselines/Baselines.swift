import RoomcastFusion
import Shared

/// A named baseline rule. Scored like Roomcast: in the aggregator core, on the readings the
/// edge agents published (`ScenarioRun.baseline`), decided on the core's 1 s ticks.
public struct Baseline: Sendable {
    public var name: String
    /// One line for reports.
    public var summary: String
    private let factory: @Sendable (SiteModel) -> any PresenceEstimator & Sendable

    public init(name: String, summary: String, make: @escaping @Sendable (SiteModel) -> any PresenceEstimator & Sendable) {
        self.name = name
        self.summary = summary
        self.factory = make
    }

    /// A fresh estimator for `site`.
    public func make(site: SiteModel) -> any PresenceEstimator & Sendable { factory(site) }
}

/// The baseline estimators Roomcast is scored against (docs/simulator.md).
public enum Baselines {
    /// Every baseline, in report order.
    public static let all: [Baseline] = [
        Baseline(name: "nearest-latest", summary: "room of the node with the strongest latest reading, every second") {
            NearestLatestEstimator(site: $0)
        },
        Baseline(name: "mqtt-room",
                 summary: "HA mqtt_room: latest raw distance per node; closer room, or any room after 5 s") { site in
            var e = MQTTRoomEstimator(site: site)
            e.rawDistance = true
            return e
        },
        Baseline(name: "ema-nearest", summary: "nearest node on an EMA (α 0.3) of the readings' RSSI, every second") {
            EMANearestEstimator(site: $0, alpha: 0.3)
        },
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
    public static func make(_ name: String, site: SiteModel) -> (any PresenceEstimator & Sendable)? {
        named(name)?.make(site: site)
    }
}
