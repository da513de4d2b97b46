/// One ranged beacon as heard by one node: the payload of
/// `<prefix>/nodes/<node>/beacons/<id>` (docs/schema/reading.schema.json).
public struct BeaconReading: Codable, Sendable, Equatable {
    public var v: Int = WireFormat.version
    public var id: BeaconID
    public var node: String
    /// Capture time at the node, unix seconds (millisecond precision).
    public var ts: Double
    /// Per-node, strictly increasing sequence number.
    public var seq: UInt64
    public var rssi: Int
    public var rssiFiltered: Double
    /// How sure the node is of `rssiFiltered`: its filter's standard deviation (dB). A beacon
    /// heard less often is known less well, and its readings count for less (docs/fusion.md).
    public var rssiSD: Double?
    /// Reference RSSI at 1 m used for the distance.
    public var power: Int
    public var distance: Double
    public var proximity: Proximity
    public var kind: BeaconKind
    /// Last advertiser address, 12 lowercase hex digits with colons.
    public var mac: String
    public var addressType: String?
    public var name: String?
    public var uuid: String?
    public var major: UInt16?
    public var minor: UInt16?
    public var namespace: String?
    public var instance: String?
    public var url: String?
    public var txPower: Int?
    public var telemetry: BeaconTelemetry?
    /// Observed advertising interval in seconds (median of recent gaps).
    public var interval: Double?
    /// Advertisements folded into this reading since the previous one.
    public var samples: Int?
    /// `power` is a node's reference rather than the beacon's own (ESPresense's `rssi@1m`, which
    /// carries that node's adjustment): fusion takes it only for a beacon no Roomcast node
    /// reports. Not on the wire.
    public var powerIsNodesReference = false

    public init(id: BeaconID, node: String, ts: Double, seq: UInt64, rssi: Int, rssiFiltered: Double,
                power: Int, distance: Double, proximity: Proximity, kind: BeaconKind, mac: String) {
        self.id = id
        self.node = node
        self.ts = ts
        self.seq = seq
        self.rssi = rssi
        self.rssiFiltered = rssiFiltered
        self.power = power
        self.distance = distance
        self.proximity = proximity
        self.kind = kind
        self.mac = mac
    }

    enum CodingKeys: String, CodingKey {
        case v, id, node, ts, seq, rssi, power, distance, proximity, kind, mac, name
        case uuid, major, minor, namespace, instance, url, telemetry, interval, samples
        case rssiFiltered = "rssi_filtered"
        case rssiSD = "rssi_sd"
        case addressType = "address_type"
        case txPower = "tx_power"
    }
}

extension BeaconReading {
    /// Whether the reading carries a level to range by. A beacon its node has heard only without
    /// an RSSI (HCI's 127, "not available") is reported at the floor with proximity `unknown`,
    /// as CoreLocation reports rssi 0: heard, but no measurement, and fusion takes none from it.
    public var hasLevel: Bool { !(proximity == .unknown && rssiFiltered <= -127) }
}

/// Beacon telemetry (Eddystone-TLM, Estimote Telemetry), every field optional.
public struct BeaconTelemetry: Codable, Sendable, Equatable {
    public var batteryMillivolts: Int?
    public var batteryPercent: Int?
    public var temperature: Double?
    public var advertisementCount: UInt32?
    public var uptime: Double?
    public var encrypted: Bool?
    public var motion: Bool?

    public init(batteryMillivolts: Int? = nil, batteryPercent: Int? = nil, temperature: Double? = nil,
                advertisementCount: UInt32? = nil, uptime: Double? = nil, encrypted: Bool? = nil,
                motion: Bool? = nil) {
        self.batteryMillivolts = batteryMillivolts
        self.batteryPercent = batteryPercent
        self.temperature = temperature
        self.advertisementCount = advertisementCount
        self.uptime = uptime
        self.encrypted = encrypted
        self.motion = motion
    }

    enum CodingKeys: String, CodingKey {
        case temperature, uptime, encrypted, motion
        case batteryMillivolts = "battery_mv"
        case batteryPercent = "battery_pct"
        case advertisementCount = "adv_count"
    }
}
