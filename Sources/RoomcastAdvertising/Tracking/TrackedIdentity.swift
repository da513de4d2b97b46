import Shared

/// Who an advertisement belongs to, once the config has had its say.
public struct TrackedIdentity: Sendable, Equatable {
    public var id: BeaconID
    public var kind: BeaconKind
    /// Display name from `known_beacons`, else the IRK's name.
    public var name: String?
    /// Expected RSSI at 1 m: the configured power, else what the beacon advertises (converted
    /// to 1 m for Eddystone). Nil when neither is known.
    public var referencePower: Int?
    /// Names of the configured regions the beacon is in.
    public var regions: [String]
    /// The beacon frame the identity came from, if any.
    public var beacon: Beacon?
    public var source: Source
    /// Listed under known beacons or resolved with a configured IRK: the config names it, so a
    /// stranger cannot make many of these (the agent keeps them in preference when its table is full).
    public var isKnown: Bool = false

    /// How the identity was found.
    public enum Source: String, Sendable, Equatable, Encodable {
        case beacon
        case irk
        case fingerprint
        case knownAddress = "known_address"
    }
}
