import Foundation
import RoomcastAdvertising
import RoomcastHCI
import Testing

/// What a node advertises (`IBeaconAdvertisement.encode`) is what the decoder reads
/// (`IBeacon.decode`): the two ends of the one frame layout.
@Suite struct IBeaconRoundTripTests {
    @Test(arguments: [(UInt16(0), UInt16(0), Int8(-59)), (1, 2, -8), (0x1234, 0xABCD, 20), (65535, 65535, -128)])
    func anEncodedFrameDecodesToItsFields(_ major: UInt16, _ minor: UInt16, _ power: Int8) throws {
        let uuid = "e2c56db5-dffb-48d2-b060-d0f5a71096e0"
        let ad = try #require(IBeaconAdvertisement.encode(uuidString: uuid, major: major, minor: minor, power: power))
        // Flags (3 bytes), then the manufacturer data structure: length, 0xFF, company id.
        #expect(ad.count == 30 && ad[3] == 0x1A && ad[4] == 0xFF)
        let company = UInt16(ad[5]) | UInt16(ad[6]) << 8
        let beacon = try #require(IBeacon.decode(companyID: company, ad[7...]))
        #expect(beacon.companyID == 0x004C && beacon.uuid == UUID(uuidString: uuid))
        #expect(beacon.major == major && beacon.minor == minor && beacon.measuredPower == power)
    }

    @Test func aUUIDWithOtherSeparatorsIsRefused() {
        #expect(IBeaconAdvertisement.encode(uuidString: "e2c56db5 dffb 48d2 b060 d0f5a71096e0", major: 1, minor: 1, power: 0) == nil)
        #expect(IBeaconAdvertisement.encode(uuidString: "e2:c5:6d:b5:df:fb:48:d2:b0:60:d0:f5:a7:10:96:e0", major: 1, minor: 1, power: 0) == nil)
        #expect(IBeaconAdvertisement.encode(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0", major: 1, minor: 1, power: 0)
                == IBeaconAdvertisement.encode(uuidString: "e2c56db5dffb48d2b060d0f5a71096e0", major: 1, minor: 1, power: 0))
    }
}
