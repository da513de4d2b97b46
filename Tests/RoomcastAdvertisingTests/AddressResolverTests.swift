import Testing
import Shared
@testable import RoomcastAdvertising

@Suite struct AddressResolverTests {
    // Core 5.4 Vol 3 Part H Appendix D.7 (ah sample data): IRK ec0234a3 57c8ad05 341010a6 0a397d9b,
    // prand 708194, hash 0dfbaa; all most significant octet first.
    static let sampleIRK = bytes("ec0234a357c8ad05341010a60a397d9b")

    @Test func ahMatchesTheCoreSampleData() {
        #expect(AddressResolver.ah(irk: Self.sampleIRK, prand: 0x708194) == 0x0DFBAA)
    }

    /// An RPA for `irk` from a prand whose top bits are 01.
    static func rpa(_ irk: [UInt8], prand: UInt32) -> BLEAddress {
        let p = prand & 0x3F_FFFF | 0x40_0000
        let h = AddressResolver.ah(irk: irk, prand: p)!
        return BLEAddress(value: UInt64(p) << 24 | UInt64(h))
    }

    @Test func resolvesTheSampleAddress() throws {
        let key = try #require(IdentityResolvingKey(name: "phone", key: Self.sampleIRK))
        let other = try #require(IdentityResolvingKey(name: "watch", hex: "00112233445566778899aabbccddeeff"))
        let r = AddressResolver(keys: [other, key])
        // The displayed address is prand || hash: 70:81:94:0d:fb:aa.
        let address = try #require(BLEAddress("70:81:94:0d:fb:aa"))
        #expect(r.resolve(address, type: .random)?.name == "phone")
        #expect(key.beaconID.rawValue == "irk:phone")
        // Same bits, but a public address is never resolved.
        #expect(r.resolve(address, type: .public) == nil)
    }

    /// BlueZ's info file holds the sample key as 9B7D390AA610103405ADC857A33402EC (on-air order).
    @Test func lsbFirstKeysAreReversed() throws {
        let k = try #require(IdentityResolvingKey(name: "p", hex: "9B7D390AA610103405ADC857A33402EC", lsbFirst: true))
        #expect(k.key == Self.sampleIRK)
        let r = AddressResolver(keys: [k])
        #expect(r.resolve(try #require(BLEAddress("70:81:94:0d:fb:aa")), type: .random)?.name == "p")
    }

    @Test func rotatingAddressesKeepOneIdentity() throws {
        let key = try #require(IdentityResolvingKey(name: "phone", key: Self.sampleIRK))
        let r = AddressResolver(keys: [key])
        for prand in [UInt32(1), 0x1234, 0xABCDEF, 0x3FFFFF] {
            #expect(r.resolve(Self.rpa(Self.sampleIRK, prand: prand), type: .random)?.name == "phone")
        }
        // A resolvable-looking address that is not ours.
        #expect(r.resolve(try #require(BLEAddress("40:00:01:00:00:00")), type: .random) == nil)
    }

    @Test func cacheAvoidsRepeatedAESAndStaysBounded() throws {
        let key = try #require(IdentityResolvingKey(name: "phone", key: Self.sampleIRK))
        let r = AddressResolver(keys: [key], cacheLimit: 8)
        let a = Self.rpa(Self.sampleIRK, prand: 7)
        _ = r.resolve(a, type: .random)
        let after = r.aesEvaluations
        for _ in 0..<10 { #expect(r.resolve(a, type: .random) != nil) }
        #expect(r.aesEvaluations == after)
        for p in 0..<100 { _ = r.resolve(BLEAddress(value: UInt64(0x40_0000 | p) << 24 | 0x123456), type: .random) }
        #expect(r.cachedCount == 8)
    }

    @Test func rejectsBadKeysAndNames() {
        #expect(IdentityResolvingKey(name: "phone", hex: "ec02") == nil)
        #expect(IdentityResolvingKey(name: "my phone", key: Self.sampleIRK) == nil)
    }
}
