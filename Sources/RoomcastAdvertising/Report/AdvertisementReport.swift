import Shared

/// `edge-agent decode` output: the GAP fields, every beacon and fingerprint found, the tracked
/// identity, and what was malformed. Field names follow the wire contract (snake_case).
public struct AdvertisementReport: Codable, Sendable, Equatable {
    public var address: String?
    public var addressType: String?
    /// For random addresses: static, resolvable or non_resolvable.
    public var addressKind: String?
    public var rssi: Int?
    public var flags: Int?
    public var name: String?
    /// True when `name` is the Shortened Local Name.
    public var nameShortened: Bool?
    public var serviceUuids: [String]?
    public var serviceData: [ServiceDataEntry]?
    public var manufacturerData: [ManufacturerEntry]?
    /// The TX Power Level AD structure (dBm), not a beacon's calibrated power.
    public var txPowerLevel: Int?
    public var appearance: Int?
    public var beacons: [BeaconEntry]
    /// Fingerprint ids matched (`fp:<rule>-<value>`).
    public var fingerprints: [String] = []
    public var identity: IdentityEntry?
    public var issues: [String]
    public var rejections: [String]

    public struct ServiceDataEntry: Codable, Sendable, Equatable {
        public var uuid: String
        public var data: String
    }

    public struct ManufacturerEntry: Codable, Sendable, Equatable {
        public var companyId: Int
        public var data: String
        enum CodingKeys: String, CodingKey {
            case data
            case companyId = "company_id"
        }
    }

    /// One beacon frame in wire-contract field names.
    public struct BeaconEntry: Codable, Sendable, Equatable {
        public var format: String
        public var kind: BeaconKind?
        public var id: BeaconID?
        public var companyId: Int?
        public var uuid: String?
        public var major: UInt16?
        public var minor: UInt16?
        public var namespace: String?
        public var instance: String?
        public var url: String?
        /// Power as the frame carries it: 1 m for iBeacon/AltBeacon, 0 m for Eddystone.
        public var txPower: Int?
        /// Expected RSSI at 1 m (Eddystone: tx_power − 41).
        public var power: Int?
        public var eid: String?
        /// Estimote device identifier.
        public var identifier: String?
        public var telemetry: BeaconTelemetry?

        enum CodingKeys: String, CodingKey {
            case format, kind, id, uuid, major, minor, namespace, instance, url, power, eid, identifier, telemetry
            case companyId = "company_id"
            case txPower = "tx_power"
        }

        public init(_ b: Beacon) {
            format = b.format
            kind = b.kind
            id = b.beaconID
            txPower = b.advertisedPower
            power = b.referencePower
            telemetry = b.telemetry
            switch b {
            case .iBeacon(let i):
                companyId = Int(i.companyID)
                uuid = withUnsafeBytes(of: i.uuid.uuid) { Hex.uuidString($0) }
                major = i.major
                minor = i.minor
            case .altBeacon(let a):
                companyId = Int(a.companyID)
                uuid = BeaconID.uuidString(a.id1)
                major = a.id2
                minor = a.id3
            case .eddystone(let e):
                switch e {
                case let .uid(_, ns, inst):
                    namespace = Hex.encode(ns)
                    instance = Hex.encode(inst)
                case let .url(_, u, _): url = u
                case let .eid(_, e): eid = Hex.encode(e)
                case .tlm, .encryptedTLM: break
                }
            case .uriBeacon(_, let u): url = u
            case .estimoteTelemetry(let t): identifier = Hex.encode(t.identifier)
            case .estimoteNearable(let n): identifier = Hex.encode(n.identifier)
            case .exposureNotification: break
            }
        }
    }

    /// The tracked identity under the given config.
    public struct IdentityEntry: Codable, Sendable, Equatable {
        public var id: BeaconID
        public var kind: BeaconKind
        public var name: String?
        public var power: Int?
        public var regions: [String]
        public var source: String
    }

    enum CodingKeys: String, CodingKey {
        case address, rssi, flags, name, appearance, beacons, fingerprints, identity, issues, rejections
        case addressType = "address_type"
        case addressKind = "address_kind"
        case nameShortened = "name_shortened"
        case serviceUuids = "service_uuids"
        case serviceData = "service_data"
        case manufacturerData = "manufacturer_data"
        case txPowerLevel = "tx_power_level"
    }

    public init(_ d: DecodedAdvertisement) {
        address = d.address?.description
        addressType = d.addressType?.description
        if let a = d.address, d.addressType?.isRandom == true { addressKind = a.randomKind.rawValue }
        rssi = d.rssi
        let ad = d.data
        flags = ad.flags.map(Int.init)
        name = ad.localName
        nameShortened = ad.completeName == nil && ad.shortName != nil ? true : nil
        serviceUuids = ad.serviceUUIDs.isEmpty ? nil : ad.serviceUUIDs.map(\.description)
        serviceData = ad.serviceData.isEmpty ? nil
            : ad.serviceData.map { ServiceDataEntry(uuid: $0.uuid.description, data: Hex.encode($0.data)) }
        manufacturerData = ad.manufacturerData.isEmpty ? nil
            : ad.manufacturerData.map { ManufacturerEntry(companyId: Int($0.companyID), data: Hex.encode($0.data)) }
        txPowerLevel = ad.txPowerLevel.map(Int.init)
        appearance = ad.appearance.map(Int.init)
        beacons = d.scan.beacons.map(BeaconEntry.init)
        identity = d.identity.map {
            IdentityEntry(id: $0.id, kind: $0.kind, name: $0.name, power: $0.referencePower, regions: $0.regions,
                          source: $0.source.rawValue)
        }
        issues = ad.issues.map(\.description)
        rejections = d.scan.rejections.map(\.description)
    }
}
