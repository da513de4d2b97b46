import Shared

/// What ranging knows about one beacon at one node at a given time.
public struct RangeEstimate: Sendable, Equatable {
    public var id: BeaconID
    /// The newest raw RSSI, dBm (before rx adjustment).
    public var rssi: Int
    /// Filtered, rx-adjusted RSSI, dBm.
    public var rssiFiltered: Double
    /// Reference RSSI at 1 m used for `distance`.
    public var power: Int
    /// Metres, from the filtered RSSI.
    public var distance: Double
    public var proximity: Proximity
    /// Observed advertising interval in seconds, when known.
    public var interval: Double?
    /// Time of the newest sample.
    public var lastSeen: Double
    /// Samples folded in since the beacon was first (or again) heard.
    public var samples: Int

    public init(id: BeaconID, rssi: Int, rssiFiltered: Double, power: Int, distance: Double,
                proximity: Proximity, interval: Double?, lastSeen: Double, samples: Int) {
        self.id = id
        self.rssi = rssi
        self.rssiFiltered = rssiFiltered
        self.power = power
        self.distance = distance
        self.proximity = proximity
        self.interval = interval
        self.lastSeen = lastSeen
        self.samples = samples
    }
}
