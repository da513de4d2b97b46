import Foundation
import Testing
import Shared
@testable import RoomcastAdvertising

@Suite struct BeaconFormatTests {

    func scan(_ hex: String, companies: Set<UInt16> = []) -> BeaconScan {
        BeaconDecoder(iBeaconCompanies: companies).decode(AdvertisingData.decode(bytes(hex)))
    }

    // iBeacon e2c56db5-dffb-48d2-b060-d0f5a71096e0, major 100, minor 0, measured power -59
    // (ble_monitor test_ibeacon_parser, MIT).
    static let iBeaconHex = "02011a1aff4c000215e2c56db5dffb48d2b060d0f5a71096e000640000c5"

    @Test func iBeacon() throws {
        let s = scan(Self.iBeaconHex)
        guard case .iBeacon(let b)? = s.beacons.first else { Issue.record("no iBeacon"); return }
        #expect(b.uuid == UUID(uuidString: "e2c56db5-dffb-48d2-b060-d0f5a71096e0"))
        #expect(b.major == 100 && b.minor == 0 && b.measuredPower == -59)
        #expect(s.beacons.first?.beaconID?.rawValue == "ibeacon:e2c56db5-dffb-48d2-b060-d0f5a71096e0-100-0")
        #expect(s.beacons.first?.referencePower == -59)
        #expect(s.beacons.first?.kind == .iBeacon)
    }

    @Test func appleFramesThatAreNotIBeaconsAreRejected() {
        // Apple Nearby Info (type 0x10), as iPhones send it.
        let s = scan("02011a020a0c0aff4c001005441cbd08c5")
        #expect(s.beacons.isEmpty)
        #expect(s.rejections.map(\.format) == ["ibeacon"])
    }

    @Test func lookAlikeFromOtherCompanyNeedsAllowList() {
        let lookAlike = "1aff5900" + "0215e2c56db5dffb48d2b060d0f5a71096e000640000c5"
        #expect(scan(lookAlike).beacons.isEmpty)
        #expect(scan(lookAlike).rejections.count == 1)
        guard case .iBeacon(let b)? = scan(lookAlike, companies: [0x0059]).beacons.first else {
            Issue.record("allow-listed look-alike not decoded"); return
        }
        #expect(b.companyID == 0x0059)
    }

    @Test func truncatedIBeaconIsRejected() {
        let s = scan("16ff4c000215e2c56db5dffb48d2b060d0f5a71096e000")
        #expect(s.beacons.isEmpty)
        #expect(s.rejections.first?.reason == .shortIBeacon(length: 19))
    }

    // AltBeacon id1 2f234454-cf6d-4a0f-adf2-f4911ba9ffa6, id2 1, id3 2, ref -59, reserved 9,
    // company 0x0118 (Android Beacon Library AltBeaconParserTest, Apache-2.0).
    @Test func altBeacon() {
        let s = scan("02011a1bff1801beac2f234454cf6d4a0fadf2f4911ba9ffa600010002c509")
        guard case .altBeacon(let a)? = s.beacons.first else { Issue.record("no AltBeacon"); return }
        #expect(BeaconID.uuidString(a.id1) == "2f234454-cf6d-4a0f-adf2-f4911ba9ffa6")
        #expect(a.id2 == 1 && a.id3 == 2 && a.referenceRSSI == -59 && a.reserved == 9 && a.companyID == 0x0118)
        #expect(s.beacons.first?.beaconID?.rawValue == "altbeacon:2f234454-cf6d-4a0f-adf2-f4911ba9ffa6-1-2")
    }

    // Eddystone-UID namespace 12345678901234678901, instance 000000000001, TX -29 at 0 m
    // (beacontools test_parser, MIT).
    @Test func eddystoneUIDAndPowerConvention() {
        let s = scan("0201060303aafe1716aafe00e3123456789012346789010000000000010000")
        guard case .eddystone(.uid(let tx, let ns, let inst))? = s.beacons.first else { Issue.record("no UID"); return }
        #expect(tx == -29)
        #expect(Hex.encode(ns) == "12345678901234678901" && Hex.encode(inst) == "000000000001")
        #expect(s.beacons.first?.advertisedPower == -29)
        #expect(s.beacons.first?.referencePower == -70) // 0 m → 1 m: −41 dB
        #expect(s.beacons.first?.beaconID?.rawValue == "eddystone:12345678901234678901-000000000001")
    }

    @Test func eddystoneURL() {
        let s = scan("0303aafe1316aafe10f8036769746875620063697472757a")
        guard case .eddystone(.url(let tx, let url, _))? = s.beacons.first else { Issue.record("no URL"); return }
        #expect(tx == -8 && url == "https://github.com/citruz")
        #expect(s.beacons.first?.kind == .eddystoneURL)
        #expect(s.beacons.first?.beaconID == nil)
    }

    @Test func eddystoneTLMPlainAndEncrypted() throws {
        let plain = scan("0201060303aafe1116aafe20000b1813000000146700002ac4")
        let t = try #require(plain.beacons.first?.telemetry)
        #expect(t.batteryMillivolts == 2840 && t.temperature == 19 && t.advertisementCount == 5223)
        #expect(t.uptime == 1094.8 && t.encrypted == false)
        let enc = scan("0201060303aafe1516aafe2001414141414141414141414141deadbeff")
        guard case .eddystone(.encryptedTLM(let data, let salt, let mic))? = enc.beacons.first else {
            Issue.record("no eTLM"); return
        }
        #expect(data == [UInt8](repeating: 0x41, count: 12) && salt == 0xDEAD && mic == 0xBEFF)
        #expect(enc.beacons.first?.telemetry == BeaconTelemetry(encrypted: true))
    }

    @Test func eddystoneEIDAndUnknownFrame() {
        guard case .eddystone(.eid(let tx, let eid))? = scan("0d16aafe30e34549445f74657374").beacons.first else {
            Issue.record("no EID"); return
        }
        #expect(tx == -29 && Hex.encode(eid) == "4549445f74657374")
        let unknown = scan("1716aafe01e3123456789012346789010000000000010000")
        #expect(unknown.beacons.isEmpty && unknown.rejections.first?.reason == .eddystone(.unknownFrameType(1)))
    }

    @Test(arguments: [
        ("00676f6f676c6507", "http://www.google.com"),
        ("016578616d706c6500", "https://www.example.com/"),
        ("02676f6f2e676c2f433248433438", "http://goo.gl/C2HC48"),
        ("03782e696f0b", "https://x.io.info"),
    ])
    func urlCodecRoundTrip(hex: String, url: String) {
        #expect(EddystoneURLCodec.decode(bytes(hex)) == url)
        #expect(EddystoneURLCodec.encode(url) == bytes(hex))
    }

    @Test func urlCodecRejectsBadInput() {
        #expect(EddystoneURLCodec.decode([0x04, 0x41]) == nil)   // unknown scheme
        #expect(EddystoneURLCodec.decode([0x00, 0x20]) == nil)   // reserved byte
        #expect(EddystoneURLCodec.encode("ftp://x") == nil)
    }

    @Test func estimoteTelemetryB() throws {
        let s = scan("02010403039afe17169afe2247a038d5eb03264001d842ed73492566bc2e50")
        guard case .estimoteTelemetry(let t)? = s.beacons.first, case .b(let b) = t.subframe else {
            Issue.record("no Estimote B"); return
        }
        #expect(Hex.encode(t.identifier) == "47a038d5eb032640" && t.protocolVersion == 2)
        #expect(b.temperature == 25.5 && b.uptimeSeconds == 4_870_800 && b.batteryLevel == 80)
        #expect(b.ambientLight == 276.48 && b.magneticField == [-0.3125, 0.515625, -0.1484375])
        let tel = try #require(s.beacons.first?.telemetry)
        #expect(tel.batteryPercent == 80 && tel.temperature == 25.5 && tel.uptime == 4_870_800)
    }

    @Test func estimoteNearable() {
        let s = scan("02010403030f1817ff5d01011efe427eb6f4bc2f040168a1aafe05c1452553")
        guard case .estimoteNearable(let n)? = s.beacons.first else { Issue.record("no nearable"); return }
        #expect(Hex.encode(n.identifier) == "1efe427eb6f4bc2f" && n.temperature == 22.5 && !n.isMoving)
        #expect(n.hardwareVersion == 4 && n.firmwareVersion == 1)
    }

    @Test func exposureNotificationIsRecognised() {
        let s = scan("02011a03036ffd17166ffd0d3b4f65584c582160571dd19010d41c2660ee34")
        guard case .exposureNotification(let e)? = s.beacons.first else { Issue.record("no EN"); return }
        #expect(Hex.encode(e.rollingProximityIdentifier) == "0d3b4f65584c582160571dd19010d41c")
        #expect(s.beacons.first?.kind == nil)
    }

    @Test func zeroMeasuredPowerMeansUncalibrated() {
        let s = scan("1aff4c000215426c7565436861726d426561636f6e730efe135500")
        #expect(s.beacons.first?.referencePower == nil)
    }

    /// No 1 m RSSI is 0 dBm or more, or below −127: such a power reached readings (and fusion)
    /// through the paths that do not range (a report without an RSSI, `edge-agent decode`).
    @Test func anImplausibleAdvertisedPowerIsNoReference() {
        let quiet = scan("0201060303aafe1716aafe0080123456789012346789010000000000010000").beacons.first
        #expect(quiet?.kind == .eddystoneUID && quiet?.referencePower == nil, "tx −128 dBm at 0 m: −169 at 1 m")
        let loud = scan("1aff4c000215426c7565436861726d426561636f6e730efe135514").beacons.first
        #expect(loud?.kind == .iBeacon && loud?.referencePower == nil)
        #expect(scan("1aff4c000215426c7565436861726d426561636f6e730efe1355c5").beacons.first?.referencePower == -59)
    }

    /// Truncating a beacon frame anywhere gives no beacon or a valid one, never a trap.
    @Test(arguments: [iBeaconHex, "0201060303aafe1716aafe00e3123456789012346789010000000000010000",
                      "02010403039afe17169afe2247a038d5eb03264001d842ed73492566bc2e50",
                      "02011a1bff1801beac2f234454cf6d4a0fadf2f4911ba9ffa600010002c509"])
    func beaconTruncationSweep(hex: String) {
        let full = bytes(hex)
        for n in 0..<full.count {
            let ad = AdvertisingData.decode(Array(full[0..<n]))
            #expect(BeaconDecoder().decode(ad).beacons.isEmpty, "prefix \(n) of \(hex)")
        }
        #expect(BeaconDecoder().decode(AdvertisingData.decode(full)).beacons.count == 1)
    }
}
