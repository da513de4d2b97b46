/// Retained, periodic node health on `<prefix>/nodes/<node>/telemetry`
/// (docs/schema/telemetry.schema.json).
public struct NodeTelemetry: Codable, Sendable, Equatable {
    public var v: Int = WireFormat.version
    public var node: String
    public var ts: Double
    public var version: String
    public var uptime: Double
    public var adapter: String
    public var room: String?
    public var advertisementsPerSecond: Double
    public var beaconsInView: Int
    public var dropped: UInt64
    public var hciErrors: UInt64
    public var hciResets: UInt64
    public var brokerReconnects: UInt64
    /// The agent's `max_tracked_beacons` (absent from agents without a bound).
    public var beaconsMax: Int?
    /// Beacons evicted from the full table since the agent started, to make room for new ones.
    public var beaconsEvicted: UInt64?
    /// Strangers not tracked since the agent started because known beacons and IRK phones took
    /// every place.
    public var beaconsRefused: UInt64?
    /// Transmitters found changing their beacon id since the agent started (more than 10 ids from
    /// one address: a tracker or app that rotates its major and minor); their new ids are not tracked.
    public var beaconsUnstable: UInt64?
    /// Publishes the broker refused since the agent started (MQTT 5 PUBACK reason ≥ 0x80, e.g. its ACL).
    public var publishesRefused: UInt64?
    /// Those refusals per topic family (beacon ids as `+`), when there were any.
    public var refusedTopics: [String: UInt64]?

    public init(node: String, ts: Double, version: String, uptime: Double, adapter: String,
                advertisementsPerSecond: Double, beaconsInView: Int, dropped: UInt64,
                hciErrors: UInt64, hciResets: UInt64, brokerReconnects: UInt64) {
        self.node = node
        self.ts = ts
        self.version = version
        self.uptime = uptime
        self.adapter = adapter
        self.advertisementsPerSecond = advertisementsPerSecond
        self.beaconsInView = beaconsInView
        self.dropped = dropped
        self.hciErrors = hciErrors
        self.hciResets = hciResets
        self.brokerReconnects = brokerReconnects
    }

    enum CodingKeys: String, CodingKey {
        case v, node, ts, version, uptime, adapter, room, dropped
        case advertisementsPerSecond = "adverts_per_s"
        case beaconsInView = "beacons_in_view"
        case hciErrors = "hci_errors"
        case hciResets = "hci_resets"
        case brokerReconnects = "broker_reconnects"
        case beaconsMax = "beacons_max"
        case beaconsEvicted = "beacons_evicted"
        case beaconsRefused = "beacons_refused"
        case beaconsUnstable = "beacons_unstable"
        case publishesRefused = "publishes_refused"
        case refusedTopics = "refused_topics"
    }
}
