import Foundation
import Shared

/// Turns a decoded advertisement into the identity the agent tracks, or nil.
///
/// Order: Exposure Notification → never tracked (it is a person's phone). Beacons with their
/// own id (iBeacon, AltBeacon, Eddystone-UID) → tracked when no regions and no known beacons
/// are configured, else when inside a region or listed as known. Then a resolvable private
/// address that resolves with a configured IRK → `irk:<name>`. Then enabled fingerprints →
/// `fp:<rule>-<value>`. Then a `mac:` id listed in known beacons.
///
/// The identity depends on the frame, never on the address, so one iBeacon heard from many
/// rotating addresses stays one beacon.
public struct BeaconIdentifier: Sendable {
    public let regions: [BeaconRegion]
    public let known: [BeaconID: KnownBeaconConfig]
    public let resolver: AddressResolver?
    public let builtIns: [BuiltInFingerprint]
    public let rules: [FingerprintRule]
    private let ids = BeaconIDCache()
    /// True when neither regions nor known beacons are configured: track every beacon with an id.
    public var tracksAllBeacons: Bool { regions.isEmpty && known.isEmpty }

    /// From validated config; throws `AdvertisingConfigError` with every problem otherwise.
    public init(config: AdvertisingConfig) throws(AdvertisingConfigError) {
        let problems = config.validate()
        guard problems.isEmpty else { throw AdvertisingConfigError(problems: problems) }
        regions = config.regions.map { r in
            if let u = r.uuid, let uuid = UUID(uuidString: u) {
                return BeaconRegion(name: r.name, match: .uuid(uuid, major: r.major.map { UInt16($0) },
                                                                minor: r.minor.map { UInt16($0) }))
            }
            return BeaconRegion(name: r.name, match: .eddystone(
                namespace: AdvertisingConfig.hexBytes(r.namespace ?? "", 10) ?? [],
                instance: r.instance.flatMap { AdvertisingConfig.hexBytes($0, 6) }))
        }
        var known: [BeaconID: KnownBeaconConfig] = [:]
        for k in config.knownBeacons { if let id = BeaconID(k.id) { known[id] = k } }
        self.known = known
        let keys = config.irks.compactMap {
            IdentityResolvingKey(name: $0.name, hex: $0.key.revealed, lsbFirst: $0.byteOrder == "lsb_first")
        }
        resolver = keys.isEmpty ? nil : AddressResolver(keys: keys, cacheLimit: config.irkCacheSize)
        builtIns = config.fingerprints.builtins.contains("all")
            ? BuiltInFingerprint.allCases : config.fingerprints.builtins.compactMap(BuiltInFingerprint.init(rawValue:))
        rules = config.fingerprints.rules.map(Self.rule(from:))
    }

    /// Tracks every iBeacon, AltBeacon and Eddystone-UID; nothing else.
    public init() {
        regions = []
        known = [:]
        resolver = nil
        builtIns = []
        rules = []
    }

    /// The tracked identity of one advertisement, or nil when it is not tracked.
    public func identify(_ data: AdvertisingData, beacons: [Beacon], address: BLEAddress?,
                         addressType: BLEAddressType?) -> TrackedIdentity? {
        for b in beacons {
            if case .exposureNotification = b { return nil }
        }
        for b in beacons {
            guard let kind = b.kind, let id = ids.id(for: b) else { continue }
            let inside = regions.filter { $0.contains(b) }.map(\.name)
            let k = known.isEmpty ? nil : known[id]
            guard tracksAllBeacons || !inside.isEmpty || k != nil else { continue }
            return TrackedIdentity(id: id, kind: kind, name: k?.name, referencePower: k?.power ?? b.referencePower,
                                   regions: inside, beacon: b, source: .beacon, isKnown: k != nil)
        }
        let beaconKind = beacons.lazy.compactMap(\.kind).first
        let power = beacons.lazy.compactMap(\.referencePower).first
        if let resolver, let address, let addressType, let irk = resolver.resolve(address, type: addressType) {
            let id = irk.beaconID
            return TrackedIdentity(id: id, kind: beaconKind ?? .device, name: known[id]?.name ?? irk.name,
                                   referencePower: known[id]?.power ?? power, regions: [], beacon: beacons.first,
                                   source: .irk, isKnown: true)
        }
        for f in builtIns {
            if let id = f.match(data, beacons: beacons) {
                return TrackedIdentity(id: id, kind: f.kind, name: known[id]?.name, referencePower: known[id]?.power ?? power,
                                       regions: [], beacon: beacons.first, source: .fingerprint,
                                       isKnown: known[id] != nil)
            }
        }
        for r in rules {
            if let id = r.match(data, address: address, addressType: addressType) {
                return TrackedIdentity(id: id, kind: r.kind, name: known[id]?.name, referencePower: known[id]?.power ?? power,
                                       regions: [], beacon: beacons.first, source: .fingerprint,
                                       isKnown: known[id] != nil)
            }
        }
        if let address, !known.isEmpty {
            let id = BeaconID.mac(address.bytes)
            if let k = known[id] {
                return TrackedIdentity(id: id, kind: beaconKind ?? .device, name: k.name, referencePower: k.power ?? power,
                                       regions: [], beacon: beacons.first, source: .knownAddress, isKnown: true)
            }
        }
        return nil
    }

    static func rule(from c: FingerprintRuleConfig) -> FingerprintRule {
        let identity: FingerprintRule.IdentitySource
        switch c.id {
        case "local_name": identity = .localName
        case "constant": identity = .constant(c.value ?? "")
        case "manufacturer_bytes": identity = .manufacturerBytes(offset: c.offset ?? 0, length: c.length ?? 0)
        case "service_data_bytes": identity = .serviceDataBytes(offset: c.offset ?? 0, length: c.length ?? 0)
        default: identity = .address
        }
        var r = FingerprintRule(name: c.name, identity: identity)
        r.companyID = c.companyId?.value.map { UInt16($0) }
        r.manufacturerPrefix = c.manufacturerPrefix.flatMap(Hex.decode) ?? []
        r.serviceUUID = c.serviceUuid.flatMap(BluetoothUUID.init)
        r.serviceDataPrefix = c.serviceDataPrefix.flatMap(Hex.decode) ?? []
        r.localName = c.localName
        r.localNamePrefix = c.localNamePrefix
        return r
    }
}
