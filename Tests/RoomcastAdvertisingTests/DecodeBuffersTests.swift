import Testing
import Shared
@testable import RoomcastAdvertising

/// Decoding into reused buffers (the agent's path) gives what a fresh decode gives, whatever the
/// advertisement decoded before it left behind.
@Suite struct DecodeBuffersTests {
    // iBeacon e2c56db5-dffb-48d2-b060-d0f5a71096e0 1/2 power -59; Eddystone-UID; an Apple frame that
    // is not an iBeacon (rejected); a rich advertisement (name, UUIDs, service and manufacturer data);
    // a structure that runs past the end; nothing; an Exposure Notification.
    static let advertisements = [
        "0201061aff4c000215e2c56db5dffb48d2b060d0f5a71096e000010002c5",
        "0303aafe1516aafe00ba112233445566778899aabbccddeeff0000",
        "020106" + "05ff4c001005",
        AdvertisingDataTests.rich,
        "020106" + "09ff4c00",
        "",
        "03036ffd" + "17166ffd" + String(repeating: "ab", count: 20),
    ]

    @Test func buffersGiveWhatAFreshDecodeGives() throws {
        let decoder = try AdvertisementDecoder()
        var buffers = AdvertisementDecoder.Buffers()
        let address = BLEAddress("c0:00:00:00:00:01")
        // Every order of two, so each advertisement follows each other one.
        for first in Self.advertisements {
            for second in Self.advertisements {
                for hex in [first, second] {
                    let ad = bytes(hex)
                    let fresh = decoder.decode(ad, address: address, addressType: .random)
                    let identity = decoder.identify(ad, address: address, addressType: .random, buffers: &buffers)
                    #expect(identity == fresh.identity)
                    #expect(buffers.data == fresh.data)
                    #expect(buffers.scan == fresh.scan)
                }
            }
        }
    }
}
