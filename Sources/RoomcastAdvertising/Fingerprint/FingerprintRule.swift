import Shared

/// A user-configured rule that recognises a device that is not a beacon and gives it a stable
/// id `fp:<rule>-<value>` (docs/fingerprints.md).
///
/// Every condition that is set must hold. The value comes from `identity`; a rule whose value
/// cannot be read from an advertisement (say `address` on a rotating address) does not match.
public struct FingerprintRule: Sendable, Equatable {
    /// Lowercase letters, digits, '-', '_' or '.'; the `<rule>` part of the id.
    public var name: String
    /// Manufacturer data of this company must be present.
    public var companyID: UInt16?
    /// ... and start with these bytes (after the company id).
    public var manufacturerPrefix: [UInt8] = []
    /// This service UUID must be listed or carry service data.
    public var serviceUUID: BluetoothUUID?
    /// Service data of `serviceUUID` must start with these bytes.
    public var serviceDataPrefix: [UInt8] = []
    /// The local name must equal this.
    public var localName: String?
    /// The local name must start with this.
    public var localNamePrefix: String?
    public var identity: IdentitySource
    /// The kind readings of this device carry.
    public var kind: BeaconKind = .device

    /// Where the `<value>` of the id comes from.
    public enum IdentitySource: Sendable, Equatable {
        /// The advertiser address, only when it is public or random static (never a rotating one).
        case address
        /// The local name, lowercased, with characters outside [a-z0-9._-] replaced by '_'.
        case localName
        /// A fixed value: for a rule that matches exactly one device.
        case constant(String)
        /// Bytes of the matched manufacturer data (after the company id), as hex.
        case manufacturerBytes(offset: Int, length: Int)
        /// Bytes of the matched service data (after the UUID), as hex.
        case serviceDataBytes(offset: Int, length: Int)
    }

    public init(name: String, identity: IdentitySource) {
        self.name = name
        self.identity = identity
    }

    /// The id this rule gives the advertisement, or nil when it does not match.
    public func match(_ ad: AdvertisingData, address: BLEAddress?, addressType: BLEAddressType?) -> BeaconID? {
        var mfg: ManufacturerData?
        if let company = companyID {
            guard let m = ad.manufacturerData.first(where: {
                $0.companyID == company && $0.data.starts(with: manufacturerPrefix)
            }) else { return nil }
            mfg = m
        }
        var svc: ServiceData?
        if let uuid = serviceUUID {
            svc = ad.serviceData.first(where: { $0.uuid == uuid && $0.data.starts(with: serviceDataPrefix) })
            if svc == nil && (!serviceDataPrefix.isEmpty || !ad.serviceUUIDs.contains(uuid)) { return nil }
        }
        if let exact = localName, ad.localName != exact { return nil }
        if let prefix = localNamePrefix, !(ad.localName?.hasPrefix(prefix) ?? false) { return nil }

        let value: String?
        switch identity {
        case .address:
            guard let address, let addressType, Self.isStable(address, addressType) else { return nil }
            value = Hex.encode(address.bytes)
        case .localName:
            value = ad.localName.map(Self.sanitise).flatMap { $0.isEmpty ? nil : $0 }
        case .constant(let c):
            value = c
        case let .manufacturerBytes(offset, length):
            value = mfg.flatMap { Self.hexSlice($0.data, offset, length) }
        case let .serviceDataBytes(offset, length):
            value = svc.flatMap { Self.hexSlice($0.data, offset, length) }
        }
        return value.flatMap { BeaconID.fingerprint(name, $0) }
    }

    /// True when the address does not rotate: public, or random static.
    public static func isStable(_ a: BLEAddress, _ t: BLEAddressType) -> Bool {
        switch t {
        case .public, .publicIdentity, .randomIdentity: return true
        case .random: return a.randomKind == .staticAddress
        case .other: return false
        }
    }

    static func hexSlice(_ d: ArraySlice<UInt8>, _ offset: Int, _ length: Int) -> String? {
        guard offset >= 0, length > 0, length <= d.count, offset <= d.count - length else { return nil }
        let s = d.startIndex + offset
        return Hex.encode(d[s..<(s + length)])
    }

    static func sanitise(_ name: String) -> String {
        String(name.lowercased().unicodeScalars.prefix(64).map { c -> Character in
            switch c {
            case "a"..."z", "0"..."9", "-", "_", ".": return Character(c)
            default: return "_"
            }
        })
    }
}
