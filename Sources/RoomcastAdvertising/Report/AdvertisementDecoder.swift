import Shared

/// The advertising pipeline in one value: AD structures → beacon frames → tracked identity.
/// Build it once from config; `decode` is pure apart from the IRK cache.
public struct AdvertisementDecoder: Sendable {
    public let beacons: BeaconDecoder
    public let identifier: BeaconIdentifier

    /// Throws `AdvertisingConfigError` listing every config problem.
    public init(config: AdvertisingConfig = AdvertisingConfig()) throws(AdvertisingConfigError) {
        identifier = try BeaconIdentifier(config: config)
        beacons = BeaconDecoder(iBeaconCompanies: Set(config.ibeaconCompanyIds.compactMap { $0.value.map(UInt16.init) }))
    }

    /// Decodes one advertisement's AD bytes (advertising data or scan response).
    public func decode(_ adBytes: [UInt8], address: BLEAddress? = nil, addressType: BLEAddressType? = nil,
                       rssi: Int? = nil) -> DecodedAdvertisement {
        let data = AdvertisingData.decode(adBytes)
        let scan = beacons.decode(data)
        let identity = identifier.identify(data, beacons: scan.beacons, address: address, addressType: addressType)
        return DecodedAdvertisement(address: address, addressType: addressType, rssi: rssi, data: data,
                                    scan: scan, identity: identity)
    }

    /// What `decode` builds for each advertisement, kept between advertisements so that their
    /// arrays keep their storage: the agent decodes thousands a second and needs only the identity.
    public struct Buffers: Sendable {
        public internal(set) var data = AdvertisingData()
        public internal(set) var scan = BeaconScan()
        public init() {}
    }

    /// The tracked identity of one advertisement, as `decode(...).identity`, decoded in `buffers`
    /// (which then hold its AD structures and beacon frames).
    public func identify(_ adBytes: [UInt8], address: BLEAddress?, addressType: BLEAddressType?,
                         buffers: inout Buffers) -> TrackedIdentity? {
        AdvertisingData.decode(adBytes, into: &buffers.data)
        beacons.decode(buffers.data, into: &buffers.scan)
        return identifier.identify(buffers.data, beacons: buffers.scan.beacons, address: address, addressType: addressType)
    }

    /// `edge-agent decode`: hex AD structures plus optional address, address type and RSSI, as a
    /// JSON-encodable report. Throws `DecodeInputError` for input that is not hex or not an address.
    public func report(hex: String, address: String? = nil, addressType: String? = nil,
                       rssi: Int? = nil) throws(DecodeInputError) -> AdvertisementReport {
        guard let bytes = Hex.decode(hex) else { throw .notHex }
        var addr: BLEAddress?
        if let address {
            guard let a = BLEAddress(address) else { throw .badAddress(address) }
            addr = a
        }
        var type: BLEAddressType?
        if let addressType {
            guard let t = BLEAddressType(addressType) else { throw .badAddressType(addressType) }
            type = t
        }
        let decoded = decode(bytes, address: addr, addressType: type, rssi: rssi)
        var report = AdvertisementReport(decoded)
        report.fingerprints = fingerprints(decoded).map(\.rawValue)
        return report
    }

    /// Every fingerprint id the advertisement matches: all built-ins (enabled or not, so
    /// `decode` shows what enabling one would give) and the configured rules.
    public func fingerprints(_ d: DecodedAdvertisement) -> [BeaconID] {
        var ids = BuiltInFingerprint.allCases.compactMap { $0.match(d.data, beacons: d.scan.beacons) }
        ids += identifier.rules.compactMap { $0.match(d.data, address: d.address, addressType: d.addressType) }
        return ids
    }
}
