import Foundation
import Testing
import Shared
@testable import RoomcastAdvertising

@Suite struct AdvertisementReportTests {
    @Test func reportUsesWireFieldNames() throws {
        let r = try AdvertisementDecoder().report(
            hex: "02011a1aff4c000215e2c56db5dffb48d2b060d0f5a71096e000640000c5", address: "6A:6B:C9:A2:3E:43",
            addressType: "random", rssi: -77)
        let json = String(decoding: try WireFormat.encode(r), as: UTF8.self)
        #expect(json.contains(#""address":"6a:6b:c9:a2:3e:43""#))
        #expect(json.contains(#""address_type":"random""#))
        #expect(json.contains(#""address_kind":"resolvable""#))
        #expect(json.contains(#""rssi":-77"#))
        #expect(json.contains(#""uuid":"e2c56db5-dffb-48d2-b060-d0f5a71096e0""#))
        #expect(json.contains(#""major":100"#) && json.contains(#""minor":0"#))
        #expect(json.contains(#""tx_power":-59"#) && json.contains(#""power":-59"#))
        #expect(json.contains(#""id":"ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0-100-0""#))
        #expect(json.contains(#""company_id":76"#))
        #expect(json.contains(#""source":"beacon""#))
        // Round-trips as Codable.
        let back = try JSONDecoder().decode(AdvertisementReport.self, from: Data(try WireFormat.encode(r)))
        #expect(back == r)
    }

    @Test func reportListsTelemetryFingerprintsAndIssues() throws {
        let r = try AdvertisementDecoder().report(hex: "0201060303aafe1116aafe20000b1813000000146700002ac4e4")
        let json = String(decoding: try WireFormat.encode(r), as: UTF8.self)
        #expect(json.contains(#""telemetry":{"adv_count":5223,"battery_mv":2840,"encrypted":false,"temperature":19,"uptime":1094.8}"#))
        #expect(r.issues.count == 1 && r.address == nil && r.rssi == nil)
        let ruuvi = try AdvertisementDecoder().report(hex: BeaconIdentifierTests.ruuvi)
        #expect(ruuvi.fingerprints == ["fp:ruuvi-cbb8334c884f"] && ruuvi.identity == nil)
    }

    @Test func badInputIsATypedError() {
        #expect(throws: DecodeInputError.notHex) { try AdvertisementDecoder().report(hex: "0g") }
        #expect(throws: DecodeInputError.badAddress("aa:bb")) { try AdvertisementDecoder().report(hex: "", address: "aa:bb") }
        #expect(throws: DecodeInputError.badAddressType("weird")) {
            try AdvertisementDecoder().report(hex: "", addressType: "weird")
        }
    }
}
