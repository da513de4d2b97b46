/// A beacon the site knows by id, with a display name and an optional 1 m reference power.
public struct KnownBeaconConfig: Codable, Sendable, Equatable {
    /// A beacon id (`ibeacon:…`, `altbeacon:…`, `eddystone:…`, `mac:…`, `irk:…`, `fp:…`).
    public var id: String
    public var name: String?
    /// Expected RSSI at 1 m in dBm; overrides what the beacon advertises.
    public var power: Int?

    public init(id: String, name: String? = nil, power: Int? = nil) {
        self.id = id
        self.name = name
        self.power = power
    }
}
