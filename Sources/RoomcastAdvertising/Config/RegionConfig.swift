/// A named region (like CoreLocation's CLBeaconRegion): an iBeacon/AltBeacon UUID, optionally
/// narrowed by major and minor, or an Eddystone namespace, optionally narrowed by instance.
public struct RegionConfig: Codable, Sendable, Equatable {
    public var name: String
    public var uuid: String?
    public var major: Int?
    public var minor: Int?
    /// Eddystone namespace, 20 hex digits.
    public var namespace: String?
    /// Eddystone instance, 12 hex digits.
    public var instance: String?

    public init(name: String, uuid: String? = nil, major: Int? = nil, minor: Int? = nil,
                namespace: String? = nil, instance: String? = nil) {
        self.name = name
        self.uuid = uuid
        self.major = major
        self.minor = minor
        self.namespace = namespace
        self.instance = instance
    }
}

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

/// An Identity Resolving Key in config: 32 hex digits, most significant byte first unless
/// `byte_order: lsb_first` (see docs/fingerprints.md for where to find keys).
public struct IRKConfig: Codable, Sendable, Equatable {
    public var name: String
    public var key: String
    /// `msb_first` (default) or `lsb_first`.
    public var byteOrder: String?

    public init(name: String, key: String, byteOrder: String? = nil) {
        self.name = name
        self.key = key
        self.byteOrder = byteOrder
    }

    enum CodingKeys: String, CodingKey {
        case name, key
        case byteOrder = "byte_order"
    }
}

/// A fingerprint rule in config (docs/fingerprints.md).
public struct FingerprintRuleConfig: Codable, Sendable, Equatable {
    public var name: String
    public var companyId: ConfigNumber?
    public var manufacturerPrefix: String?
    public var serviceUuid: String?
    public var serviceDataPrefix: String?
    public var localName: String?
    public var localNamePrefix: String?
    /// `address`, `local_name`, `constant`, `manufacturer_bytes` or `service_data_bytes`.
    public var id: String
    /// The value for `id: constant`.
    public var value: String?
    /// Byte offset and length for the `*_bytes` sources.
    public var offset: Int?
    public var length: Int?

    public init(name: String, id: String) {
        self.name = name
        self.id = id
    }

    enum CodingKeys: String, CodingKey {
        case name, id, value, offset, length
        case companyId = "company_id"
        case manufacturerPrefix = "manufacturer_prefix"
        case serviceUuid = "service_uuid"
        case serviceDataPrefix = "service_data_prefix"
        case localName = "local_name"
        case localNamePrefix = "local_name_prefix"
    }
}

/// The `fingerprints:` section: built-ins to enable and custom rules. Empty means off.
public struct FingerprintConfig: Codable, Sendable, Equatable {
    /// Names of built-in fingerprints, or `all`.
    public var builtins: [String]
    public var rules: [FingerprintRuleConfig]

    public init(builtins: [String] = [], rules: [FingerprintRuleConfig] = []) {
        self.builtins = builtins
        self.rules = rules
    }

    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        builtins = try c.decodeIfPresent([String].self, forKey: .builtins) ?? []
        rules = try c.decodeIfPresent([FingerprintRuleConfig].self, forKey: .rules) ?? []
    }
}
