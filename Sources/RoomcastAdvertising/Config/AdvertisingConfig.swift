import Foundation
import RoomcastConfig
import Shared

/// What the agent tracks: regions, known beacons, IRKs, fingerprints and the iBeacon
/// company allow-list. Every section is optional; with none at all every iBeacon, AltBeacon
/// and Eddystone-UID heard is tracked.
public struct AdvertisingConfig: Codable, Sendable, Equatable {
    public var regions: [RegionConfig]
    public var knownBeacons: [KnownBeaconConfig]
    public var irks: [IRKConfig]
    public var fingerprints: FingerprintConfig
    /// Companies besides Apple whose `02 15` manufacturer frames count as iBeacons.
    public var ibeaconCompanyIds: [ConfigNumber]
    /// Most resolvable private addresses whose IRK resolution is remembered.
    public var irkCacheSize: Int

    public init(regions: [RegionConfig] = [], knownBeacons: [KnownBeaconConfig] = [], irks: [IRKConfig] = [],
                fingerprints: FingerprintConfig = FingerprintConfig(), ibeaconCompanyIds: [ConfigNumber] = [],
                irkCacheSize: Int = 4096) {
        self.regions = regions
        self.knownBeacons = knownBeacons
        self.irks = irks
        self.fingerprints = fingerprints
        self.ibeaconCompanyIds = ibeaconCompanyIds
        self.irkCacheSize = irkCacheSize
    }

    enum CodingKeys: String, CodingKey {
        case regions, irks, fingerprints
        case knownBeacons = "known_beacons"
        case ibeaconCompanyIds = "ibeacon_company_ids"
        case irkCacheSize = "irk_cache_size"
    }

    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        regions = try c.decodeIfPresent([RegionConfig].self, forKey: .regions) ?? []
        knownBeacons = try c.decodeIfPresent([KnownBeaconConfig].self, forKey: .knownBeacons) ?? []
        irks = try c.decodeIfPresent([IRKConfig].self, forKey: .irks) ?? []
        fingerprints = try c.decodeIfPresent(FingerprintConfig.self, forKey: .fingerprints) ?? FingerprintConfig()
        ibeaconCompanyIds = try c.decodeIfPresent([ConfigNumber].self, forKey: .ibeaconCompanyIds) ?? []
        irkCacheSize = try c.decodeIfPresent(Int.self, forKey: .irkCacheSize) ?? 4096
    }

    /// Exactly `count` bytes from hex text, or nil.
    public static func hexBytes(_ s: String, _ count: Int) -> [UInt8]? {
        guard let b = Hex.decode(s), b.count == count else { return nil }
        return b
    }
}

