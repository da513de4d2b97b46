/// What kind of transmitter a reading came from, as on the wire.
public enum BeaconKind: String, Codable, Sendable, CaseIterable {
    case iBeacon = "ibeacon"
    case altBeacon = "altbeacon"
    case eddystoneUID = "eddystone-uid"
    case eddystoneURL = "eddystone-url"
    case eddystoneEID = "eddystone-eid"
    case estimote = "estimote"
    case device = "device"
}
