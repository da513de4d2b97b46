import Shared

/// One advertisement as the controller reported it, legacy or extended.
///
/// `address` is in display order (most significant byte first, as printed
/// `C9:50:46:A8:8C:C7`), i.e. the reverse of the little-endian wire order.
public struct AdvertisingReport: Sendable, Hashable {
    /// Advertiser address as a 48-bit number: display order's first byte is the most
    /// significant. Held as a number so that decoding a report allocates no array for it.
    public var addressValue: UInt64
    /// Advertiser address, 6 bytes, display order.
    public var address: [UInt8] {
        get { Self.bytes(of: addressValue) }
        set { addressValue = Self.value(of: newValue) }
    }
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
        self.init(addressValue: Self.value(of: address), addressType: addressType, eventType: eventType, rssi: rssi,
                  data: data, timestamp: timestamp, extended: extended)
    }

    /// A report whose address is given as a 48-bit number (see `addressValue`).
    public init(addressValue: UInt64, addressType: AddressType, eventType: AdvertisingEventType, rssi: Int?,
                data: [UInt8], timestamp: Double, extended: ExtendedFields? = nil) {
        self.addressValue = addressValue & 0xFFFF_FFFF_FFFF
        self.addressType = addressType
        self.eventType = eventType
        self.rssi = rssi
        self.data = data
        self.timestamp = timestamp
        self.extended = extended
    }

    /// Display-order address bytes as a 48-bit number (the last six if there are more).
    static func value(of address: [UInt8]) -> UInt64 {
        var v: UInt64 = 0
        for b in address { v = v << 8 | UInt64(b) }
        return v & 0xFFFF_FFFF_FFFF
    }

    /// A 48-bit address as its 6 bytes in display order.
    static func bytes(of value: UInt64) -> [UInt8] {
        (0..<6).map { UInt8(truncatingIfNeeded: value >> (40 - 8 * $0)) }
    }

    /// The address as `aa:bb:cc:dd:ee:ff` (lowercase, display order).
    public var addressString: String { Hex.address(addressValue) }

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
