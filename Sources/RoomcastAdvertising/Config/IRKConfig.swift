import RoomcastConfig

/// An Identity Resolving Key in config: 32 hex digits, most significant byte first unless
/// `byte_order: lsb_first` (see docs/fingerprints.md for where to find keys).
public struct IRKConfig: Codable, Sendable, Equatable {
    public var name: String
    /// Whoever holds the key can follow the phone: a `Secret`, shown as `***`.
    public var key: Secret
    /// `msb_first` (default) or `lsb_first`.
    public var byteOrder: String?

    public init(name: String, key: String, byteOrder: String? = nil) {
        self.name = name
        self.key = Secret(key)
        self.byteOrder = byteOrder
    }

    enum CodingKeys: String, CodingKey {
        case name, key
        case byteOrder = "byte_order"
    }
}
