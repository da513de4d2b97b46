import Shared

/// What the agent core needs to know, independent of how it was configured.
public struct AgentSettings: Sendable {
    public var node: String
    public var room: String?
    public var topics: Topics
    public var ranging: RangingConfig
    public var reportInterval: Double
    public var significantChangeDB: Double
    public var significantChangeMeters: Double
    public var telemetryInterval: Double
    public var regionExitDelay: Double
    /// Messages for other ecosystems published beside Roomcast's own (`outputs:`).
    public var outputs: [CompatibilityOutput]
    public var adapter: String
    public var version: String
    /// Most beacons tracked at once (`max_tracked_beacons`); see `BeaconTable`.
    public var maxTrackedBeacons: Int

    /// The publish defaults are the config's (`AgentConfig.Publish`), so a core made without a
    /// config publishes as the agent does.
    public init(node: String, room: String? = nil, topics: Topics = Topics(), ranging: RangingConfig = RangingConfig(),
                reportInterval: Double = AgentConfig.Publish().reportIntervalS,
                significantChangeDB: Double = AgentConfig.Publish().significantChangeDb,
                significantChangeMeters: Double = AgentConfig.Publish().significantChangeM,
                telemetryInterval: Double = AgentConfig.Publish().telemetryIntervalS, regionExitDelay: Double = 30,
                outputs: [CompatibilityOutput] = [],
                adapter: String = "hci", version: String = RoomcastVersion.current,
                maxTrackedBeacons: Int = AgentConfig.defaultMaxTrackedBeacons) {
        self.node = node
        self.room = room
        self.topics = topics
        self.ranging = ranging
        self.reportInterval = reportInterval
        self.significantChangeDB = significantChangeDB
        self.significantChangeMeters = significantChangeMeters
        self.telemetryInterval = telemetryInterval
        self.regionExitDelay = regionExitDelay
        self.outputs = outputs
        self.adapter = adapter
        self.version = version
        self.maxTrackedBeacons = maxTrackedBeacons
    }
}
