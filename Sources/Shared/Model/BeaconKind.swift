/// What kind of transmitter a reading came from, as on the wire.
public enum BeaconKind: String, Codable, Sendable, CaseIterable {
    case iBeacon = "ibeacon"
    case altBeacon = "altbeacon"
    case eddystoneUID = "eddystone-uid"
    case eddystoneURL = "eddystone-url"
    case eddystoneEID = "eddystone-eid"
    case estimote = "estimote"
    case device = "device"

    /// A kind this release does not know is a `device`: a newer agent may name new kinds within
    /// v1 (docs/mqtt-api.md), and nothing decides by the kind, so the reading is kept.
    public init(from decoder: any Decoder) throws {
        self = Self(rawValue: try decoder.singleValueContainer().decode(String.self)) ?? .device
    }
}
