import RoomcastAdvertising
import Shared
import Testing

@Suite struct IBeaconAdvertisementTests {
    /// The AD bytes of the first report in the Kolakowski anchor1 capture:
    /// uuid 5d9d2690-1512-5a3d-9c81-095046a88cc7, major 1, minor 1, power -51.
    static let captured = "0201061aff4c0002155d9d26901512 5a3d9c81095046a88cc7 00010001cd"

    @Test func encodesTheLayoutReceiversExpect() throws {
        let uuid = try #require(Hex.decode("5d9d269015125a3d9c81095046a88cc7"))
        let ad = IBeaconAdvertisement.encode(uuid: uuid, major: 1, minor: 1, power: -51)
        #expect(ad == Hex.decode(Self.captured))
        #expect(ad.count == 30)
    }

    @Test func majorAndMinorAreBigEndian() {
        let ad = IBeaconAdvertisement.encode(uuid: Array(repeating: 0, count: 16), major: 0x1234, minor: 0xABCD, power: -59)
        #expect(Array(ad[25..<29]) == [0x12, 0x34, 0xAB, 0xCD])
        #expect(ad[29] == 0xC5)
    }

    @Test func parsesUUIDStrings() {
        let a = IBeaconAdvertisement.encode(uuidString: "5d9d2690-1512-5a3d-9c81-095046a88cc7", major: 1, minor: 1, power: -51)
        #expect(a == Hex.decode(Self.captured))
        #expect(IBeaconAdvertisement.encode(uuidString: "not-a-uuid", major: 1, minor: 1, power: 0) == nil)
        #expect(IBeaconAdvertisement.encode(uuidString: "5d9d2690", major: 1, minor: 1, power: 0) == nil)
    }
}
