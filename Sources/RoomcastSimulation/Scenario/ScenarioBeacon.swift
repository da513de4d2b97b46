import Shared

/// One tracked beacon of `beacons.json`.
public struct ScenarioBeacon: Codable, Sendable, Equatable {
    public var id: BeaconID
    public var name: String?
    /// Free text such as "ibeacon" or "eddystone".
    public var kind: String
    /// Advertised reference RSSI at 1 m, dBm.
    public var measuredPower: Int?
    /// Nominal advertising interval, seconds.
    public var interval: Double?
    public var mobile: Bool

    public init(id: BeaconID, name: String?, kind: String, measuredPower: Int?, interval: Double?, mobile: Bool) {
        self.id = id
        self.name = name
        self.kind = kind
        self.measuredPower = measuredPower
        self.interval = interval
        self.mobile = mobile
    }

    enum CodingKeys: String, CodingKey {
        case id, name, kind, interval, mobile
        case measuredPower = "measured_power"
    }

    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        id = try c.decode(BeaconID.self, forKey: .id)
        name = try c.decodeIfPresent(String.self, forKey: .name)
        kind = try c.decodeIfPresent(String.self, forKey: .kind) ?? id.scheme
        measuredPower = try c.decodeIfPresent(Int.self, forKey: .measuredPower)
        // The 1-m power a beacon's frame carries (a signed byte, Eddystone's 41 dB above it).
        if let power = measuredPower, !(-127...20).contains(power) {
            throw DecodingError.dataCorruptedError(forKey: .measuredPower, in: c,
                                                   debugDescription: "\(power) dBm is no 1-m power: it lies in -127 … 20")
        }
        interval = try c.decodeIfPresent(Double.self, forKey: .interval)
        mobile = try c.decodeIfPresent(Bool.self, forKey: .mobile) ?? true
    }

    /// The wire-contract kind for readings of this beacon.
    public var beaconKind: BeaconKind {
        switch kind.lowercased() {
        case "ibeacon": return .iBeacon
        case "altbeacon": return .altBeacon
        case "eddystone", "eddystone-uid": return .eddystoneUID
        case "eddystone-url": return .eddystoneURL
        case "eddystone-eid": return .eddystoneEID
        case "estimote": return .estimote
        default: return .device
        }
    }
}
