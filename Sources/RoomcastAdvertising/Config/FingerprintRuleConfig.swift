import RoomcastConfig

/// A fingerprint rule in config (docs/fingerprints.md).
public struct FingerprintRuleConfig: Codable, Sendable, Equatable {
    public var name: String
    public var companyId: ConfigNumber?
    public var manufacturerPrefix: String?
    public var serviceUuid: String?
    public var serviceDataPrefix: String?
    public var localName: String?
    public var localNamePrefix: String?
    /// `address` (default), `local_name`, `constant`, `manufacturer_bytes` or `service_data_bytes`.
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

    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        name = try c.decode(String.self, forKey: .name)
        id = try c.decodeIfPresent(String.self, forKey: .id) ?? "address"
        value = try c.decodeIfPresent(String.self, forKey: .value)
        offset = try c.decodeIfPresent(Int.self, forKey: .offset)
        length = try c.decodeIfPresent(Int.self, forKey: .length)
        companyId = try c.decodeIfPresent(ConfigNumber.self, forKey: .companyId)
        manufacturerPrefix = try c.decodeIfPresent(String.self, forKey: .manufacturerPrefix)
        serviceUuid = try c.decodeIfPresent(String.self, forKey: .serviceUuid)
        serviceDataPrefix = try c.decodeIfPresent(String.self, forKey: .serviceDataPrefix)
        localName = try c.decodeIfPresent(String.self, forKey: .localName)
        localNamePrefix = try c.decodeIfPresent(String.self, forKey: .localNamePrefix)
    }
}
