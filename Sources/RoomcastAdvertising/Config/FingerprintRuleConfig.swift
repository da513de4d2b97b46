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
