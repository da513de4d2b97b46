import Foundation
import Testing
import Shared
@testable import RoomcastAdvertising

@Suite struct BeaconIdentifierTests {
    static let uuid = "e2c56db5-dffb-48d2-b060-d0f5a71096e0"
    static func iBeacon(major: UInt16, minor: UInt16, power: UInt8 = 0xC5) -> String {
        "02011a1aff4c000215e2c56db5dffb48d2b060d0f5a71096e0"
            + Hex.encode([UInt8(major >> 8), UInt8(major & 0xFF), UInt8(minor >> 8), UInt8(minor & 0xFF), power])
    }
    static let eddystoneUID = "0201060303aafe1716aafe00e3123456789012346789010000000000010000"
    static let exposure = "02011a03036ffd17166ffd0d3b4f65584c582160571dd19010d41c2660ee34"
    static let ruuvi = "0201061bff9904" + "0512fc5394c37c0004fffc040cac364200cd" + "cbb8334c884f"

    func identify(_ hex: String, _ config: AdvertisingConfig = AdvertisingConfig(), address: String = "c0:00:00:00:00:01",
                  type: BLEAddressType = .random) throws -> TrackedIdentity? {
        let d = try AdvertisementDecoder(config: config)
        return d.decode(bytes(hex), address: BLEAddress(address), addressType: type).identity
    }

    @Test func noConfigTracksEveryBeaconWithAnID() throws {
        #expect(try identify(Self.iBeacon(major: 1, minor: 2))?.id.rawValue == "ibeacon:\(Self.uuid)-1-2")
        #expect(try identify(Self.eddystoneUID)?.kind == .eddystoneUID)
        #expect(try identify(Self.eddystoneUID)?.referencePower == -70)
        #expect(try identify("0303aafe1316aafe10f8036769746875620063697472757a") == nil) // URL: no id
        #expect(try identify("020106" + "05ff4c000102") == nil)
    }

    @Test func sameBeaconFromRotatingAddressesIsOneID() throws {
        let ids = try ["40:11:22:33:44:55", "52:aa:bb:cc:dd:ee", "7f:00:00:00:00:01"].map {
            try identify(Self.iBeacon(major: 5, minor: 6), address: $0)?.id
        }
        #expect(Set(ids).count == 1 && ids[0] != nil)
    }

    @Test func regionsNarrowWhatIsTracked() throws {
        var c = AdvertisingConfig()
        c.regions = [RegionConfig(name: "office", uuid: Self.uuid, major: 100),
                     RegionConfig(name: "desk", uuid: Self.uuid, major: 100, minor: 7),
                     RegionConfig(name: "lab", namespace: "12345678901234678901", instance: "000000000001")]
        let inDesk = try #require(try identify(Self.iBeacon(major: 100, minor: 7), c))
        #expect(inDesk.regions == ["office", "desk"])
        #expect(try identify(Self.iBeacon(major: 100, minor: 8), c)?.regions == ["office"])
        #expect(try identify(Self.iBeacon(major: 101, minor: 7), c) == nil)
        #expect(try identify(Self.eddystoneUID, c)?.regions == ["lab"])
    }

    @Test func knownBeaconsNameAndPowerWin() throws {
        var c = AdvertisingConfig()
        c.regions = [RegionConfig(name: "office", uuid: "00000000-0000-0000-0000-000000000001")]
        c.knownBeacons = [KnownBeaconConfig(id: "ibeacon:\(Self.uuid)-1-2", name: "Keys", power: -65)]
        let keys = try #require(try identify(Self.iBeacon(major: 1, minor: 2), c))
        #expect(keys.name == "Keys" && keys.referencePower == -65 && keys.regions.isEmpty)
        #expect(try identify(Self.iBeacon(major: 1, minor: 3), c) == nil)
    }

    @Test func exposureNotificationIsNeverTracked() throws {
        var c = AdvertisingConfig()
        c.knownBeacons = [KnownBeaconConfig(id: "mac:0deaa3dcaace1")]
        c.fingerprints = FingerprintConfig(builtins: ["all"])
        #expect(try identify(Self.exposure) == nil)
        #expect(try identify(Self.exposure, address: "0d:ea:3d:ca:ac:e1", type: .public) == nil)
    }

    @Test func irkGivesRotatingPhoneOneID() throws {
        var c = AdvertisingConfig()
        c.irks = [IRKConfig(name: "anna-phone", key: "ec0234a357c8ad05341010a60a397d9b")]
        let irk = AddressResolverTests.sampleIRK
        for prand: UInt32 in [1, 99, 0x2FFFFF] {
            let a = AddressResolverTests.rpa(irk, prand: prand)
            let id = try #require(try identify("020106" + "05ff4c001005", c, address: a.description))
            #expect(id.id.rawValue == "irk:anna-phone" && id.source == .irk && id.kind == .device)
        }
        #expect(try identify("020106", c, address: "40:00:00:00:00:01") == nil)
    }

    @Test func fingerprintsAreOptIn() throws {
        #expect(try identify(Self.ruuvi) == nil)
        var c = AdvertisingConfig()
        c.fingerprints = FingerprintConfig(builtins: ["ruuvi"])
        let id = try #require(try identify(Self.ruuvi, c))
        #expect(id.id.rawValue == "fp:ruuvi-cbb8334c884f" && id.source == .fingerprint)
    }

    @Test func configuredRules() throws {
        var byPrefix = FingerprintRuleConfig(name: "bike", id: "manufacturer_bytes")
        byPrefix.companyId = 0x0059
        byPrefix.manufacturerPrefix = "aa"
        byPrefix.offset = 1
        byPrefix.length = 2
        var byName = FingerprintRuleConfig(name: "tv", id: "address")
        byName.localNamePrefix = "Living"
        var c = AdvertisingConfig()
        c.fingerprints = FingerprintConfig(rules: [byPrefix, byName])
        #expect(try identify("06ff5900aa1234", c)?.id.rawValue == "fp:bike-1234")
        #expect(try identify("06ff5900bb1234", c) == nil)
        let tv = "0c094c6976696e6720526f6f6d"
        #expect(try identify(tv, c, address: "00:1a:7d:da:71:13", type: .public)?.id.rawValue == "fp:tv-001a7dda7113")
        // An address rule never identifies a rotating address.
        #expect(try identify(tv, c, address: "40:1a:7d:da:71:13", type: .random) == nil)
    }

    @Test func knownMacAddress() throws {
        var c = AdvertisingConfig()
        c.knownBeacons = [KnownBeaconConfig(id: "mac:f1559065 29dc".replacingOccurrences(of: " ", with: ""), name: "Tag")]
        let url = "0303aafe1316aafe10f8036769746875620063697472757a"
        let id = try #require(try identify(url, c, address: "f1:55:90:65:29:dc"))
        #expect(id.id.rawValue == "mac:f155906529dc" && id.kind == .eddystoneURL && id.referencePower == -49)
    }
}

@Suite struct BeaconRegionAndCacheTests {
    @Test func uuidRegionAlsoMatchesAltBeaconID1() throws {
        let region = BeaconRegion(name: "r", match: .uuid(try #require(UUID(uuidString: "2f234454-cf6d-4a0f-adf2-f4911ba9ffa6")),
                                                         major: 1, minor: nil))
        let alt = BeaconDecoder().decode(AdvertisingData.decode(bytes("1bff1801beac2f234454cf6d4a0fadf2f4911ba9ffa600010002c509")))
        let b = try #require(alt.beacons.first)
        #expect(region.contains(b))
        let other = BeaconRegion(name: "r", match: .uuid(try #require(UUID(uuidString: "2f234454-cf6d-4a0f-adf2-f4911ba9ffa6")),
                                                        major: 2, minor: nil))
        #expect(!other.contains(b))
    }

    @Test func idCacheIsBoundedAndAgreesWithBeaconID() {
        let cache = BeaconIDCache(limit: 4)
        for minor in UInt16(0)..<20 {
            let b = Beacon.iBeacon(IBeacon(companyID: 0x4C, uuid: UUID(), major: 1, minor: minor, measuredPower: -59))
            #expect(cache.id(for: b) == b.beaconID)
            #expect(cache.id(for: b) == b.beaconID)
        }
        #expect(cache.count <= 4)
    }

    /// More beacons than the cache's recent positions, interleaved (so positions are shared and
    /// taken over), with a cache that clears now and then: every id is the frame's own.
    @Test func idCacheRecentPositionsNeverAnswerForAnotherBeacon() {
        for limit in [100, 4096] {
            let cache = BeaconIDCache(limit: limit)
            let uuids = (0..<3).map { _ in UUID() }
            let beacons = (0..<3000).map { n in
                Beacon.iBeacon(IBeacon(companyID: 0x4C, uuid: uuids[n % 3], major: UInt16(n / 7), minor: UInt16(n % 7),
                                       measuredPower: -59))
            }
            for round in 0..<3 {
                for (n, b) in beacons.enumerated() where (n + round) % 2 == 0 || round == 2 {
                    #expect(cache.id(for: b) == b.beaconID)
                }
            }
            #expect(cache.count <= limit)
        }
    }
}
