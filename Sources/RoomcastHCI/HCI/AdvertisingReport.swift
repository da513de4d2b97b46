/// One advertisement as the controller reported it, legacy or extended.
///
/// `address` is in display order (most significant byte first, as printed
/// `C9:50:46:A8:8C:C7`), i.e. the reverse of the little-endian wire order.
public struct AdvertisingReport: Sendable, Hashable {
    /// Advertiser address, 6 bytes, display order.
    public var address: [UInt8]
    public var addressType: AddressType
    public var eventType: AdvertisingEventType
    /// Received signal strength in dBm; nil when the controller sent 127 ("not available").
    public var rssi: Int?
    /// The AD structures (advertising data or scan response data).
    public var data: [UInt8]
    /// Unix seconds on the source's clock (capture time for a replay).
    public var timestamp: Double
    /// Fields only an LE Extended Advertising Report carries; nil for legacy reports.
    public var extended: ExtendedFields?

    public init(address: [UInt8], addressType: AddressType, eventType: AdvertisingEventType, rssi: Int?,
                data: [UInt8], timestamp: Double, extended: ExtendedFields? = nil) {
        self.address = address
        self.addressType = addressType
        self.eventType = eventType
        self.rssi = rssi
        self.data = data
        self.timestamp = timestamp
        self.extended = extended
    }

    /// The address as `aa:bb:cc:dd:ee:ff` (lowercase, display order).
    public var addressString: String {
        var s = ""
        s.reserveCapacity(17)
        for (i, b) in address.enumerated() {
            if i > 0 { s.append(":") }
            s.append(Self.hexDigits[Int(b >> 4)])
            s.append(Self.hexDigits[Int(b & 0x0F)])
        }
        return s
    }

    private static let hexDigits: [Character] = Array("0123456789abcdef")

    /// What an LE Extended Advertising Report adds (Core 5.4 Vol 4 Part E §7.7.65.13).
    public struct ExtendedFields: Sendable, Hashable {
        public var primaryPHY: PHY
        /// nil when no packets on a secondary channel (0x00).
        public var secondaryPHY: PHY?
        /// Advertising SID; nil when not available (0xFF).
        public var sid: UInt8?
        /// Transmit power in dBm; nil when not available (127).
        public var txPower: Int?
        /// In 1.25 ms units; 0 when there is no periodic advertising.
        public var periodicAdvertisingInterval: UInt16
        /// Present for directed advertising (display order).
        public var directAddress: [UInt8]?
        public var directAddressType: AddressType?

        public init(primaryPHY: PHY, secondaryPHY: PHY?, sid: UInt8?, txPower: Int?,
                    periodicAdvertisingInterval: UInt16 = 0, directAddress: [UInt8]? = nil,
                    directAddressType: AddressType? = nil) {
            self.primaryPHY = primaryPHY
            self.secondaryPHY = secondaryPHY
            self.sid = sid
            self.txPower = txPower
            self.periodicAdvertisingInterval = periodicAdvertisingInterval
            self.directAddress = directAddress
            self.directAddressType = directAddressType
        }
    }
}

/// The advertiser's address type (Core 5.4 Vol 4 Part E §7.7.65.2 / §7.7.65.13).
public enum AddressType: Sendable, Hashable, CustomStringConvertible {
    case `public`
    case random
    /// A resolved public identity address (0x02).
    case publicIdentity
    /// A resolved static random identity address (0x03).
    case randomIdentity
    /// No address provided, anonymous advertisement (0xFF, extended reports only).
    case anonymous
    case other(UInt8)

    public init(rawValue: UInt8) {
        switch rawValue {
        case 0x00: self = .public
        case 0x01: self = .random
        case 0x02: self = .publicIdentity
        case 0x03: self = .randomIdentity
        case 0xFF: self = .anonymous
        default: self = .other(rawValue)
        }
    }

    public var rawValue: UInt8 {
        switch self {
        case .public: 0x00
        case .random: 0x01
        case .publicIdentity: 0x02
        case .randomIdentity: 0x03
        case .anonymous: 0xFF
        case let .other(v): v
        }
    }

    public var description: String {
        switch self {
        case .public: "public"
        case .random: "random"
        case .publicIdentity: "public-identity"
        case .randomIdentity: "random-identity"
        case .anonymous: "anonymous"
        case let .other(v): "other(\(v))"
        }
    }
}

/// A radio PHY (Core 5.4 Vol 4 Part E §7.7.65.13 Primary_PHY / Secondary_PHY).
public enum PHY: Sendable, Hashable {
    case le1M
    case le2M
    case leCoded
    case other(UInt8)

    public init(rawValue: UInt8) {
        switch rawValue {
        case 0x01: self = .le1M
        case 0x02: self = .le2M
        case 0x03: self = .leCoded
        default: self = .other(rawValue)
        }
    }
}
