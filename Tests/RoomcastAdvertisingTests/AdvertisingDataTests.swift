import Testing
import Shared
@testable import RoomcastAdvertising

@Suite struct AdvertisingDataTests {
    // Flags 0x06, complete name "Proximity", 16-bit UUIDs 0x1803 0x1804 0x1802, TX power -8,
    // appearance 0x00C0, service data 0xFEAA, Apple manufacturer data.
    static let rich = "020106" + "0a0950726f78696d697479" + "0703031804180218" + "020af8" + "0319c000"
        + "0516aafe1020" + "05ff4c000102"

    @Test func decodesEveryFieldType() throws {
        let ad = AdvertisingData.decode(bytes(Self.rich))
        #expect(ad.flags == 0x06)
        #expect(ad.completeName == "Proximity")
        #expect(ad.serviceUUIDs.map(\.uuid16) == [0x1803, 0x1804, 0x1802])
        #expect(ad.txPowerLevel == -8)
        #expect(ad.appearance == 0x00C0)
        let sd = try #require(ad.serviceData(uuid16: 0xFEAA))
        #expect(Array(sd.data) == [0x10, 0x20])
        let m = try #require(ad.manufacturerData(company: 0x004C))
        #expect(Array(m.data) == [0x01, 0x02])
        #expect(ad.issues.isEmpty)
        #expect(ad.structureCount == 7)
    }

    @Test func uuidByteOrder() {
        // 32-bit 0x12345678 and 128-bit 550e8400-e29b-41d4-a716-446655440000, both little-endian on air.
        let ad = AdvertisingData.decode(bytes("050478563412" + "110600004455664416a7d4419be200840e55"))
        #expect(ad.serviceUUIDs.map(\.description) == ["12345678-0000-1000-8000-00805f9b34fb",
                                                       "550e8400-e29b-41d4-a716-446655440000"])
    }

    @Test func shortNameAndCompleteName() {
        let ad = AdvertisingData.decode(bytes("0408426172" + "0409466f6f"))
        #expect(ad.shortName == "Bar")
        #expect(ad.completeName == "Foo")
        #expect(ad.localName == "Foo")
    }

    @Test func zeroPaddingIsSkippedAndJunkAfterItReported() {
        let padded = AdvertisingData.decode(bytes("020106" + "000000"))
        #expect(padded.flags == 6)
        #expect(padded.issues.isEmpty)
        // Zero-padded advertising data followed by the scan response (Android scan records).
        let merged = AdvertisingData.decode(bytes("020106" + "0000" + "0409466f6f" + "00"))
        #expect(merged.flags == 6 && merged.completeName == "Foo" && merged.issues.isEmpty)
        let junk = AdvertisingData.decode(bytes("020106" + "00ff02"))
        #expect(junk.flags == 6)
        #expect(junk.issues == [ADIssue(offset: 4, adType: 0x02, problem: .overrun(length: 255, available: 1))])
    }

    @Test func lengthPastTheEndKeepsWhatCameBefore() {
        let ad = AdvertisingData.decode(bytes("020106" + "0509abcd"))
        #expect(ad.flags == 6)
        #expect(ad.completeName == nil)
        #expect(ad.issues == [ADIssue(offset: 3, adType: 0x09, problem: .overrun(length: 5, available: 3))])
    }

    @Test func badLengthsAreReportedAndSkipped() {
        // TX power of 2 bytes, a 16-bit list with an odd byte, manufacturer data with 1 byte.
        let ad = AdvertisingData.decode(bytes("030a0080" + "0403aabbcc" + "02ff01" + "020106"))
        #expect(ad.txPowerLevel == nil)
        #expect(ad.serviceUUIDs.map(\.uuid16) == [0xBBAA])
        #expect(ad.manufacturerData.isEmpty)
        #expect(ad.flags == 6)
        #expect(ad.issues.count == 3)
        #expect(ad.issues.allSatisfy { if case .badLength = $0.problem { true } else { false } })
    }

    @Test func invalidUTF8NameIsKeptWithIssue() {
        let ad = AdvertisingData.decode(bytes("0409ff4142"))
        #expect(ad.completeName == "\u{FFFD}AB")
        #expect(ad.issues.first?.problem == .invalidUTF8)
    }

    /// Every truncated prefix of a valid advertisement decodes without trapping, and reports an
    /// issue exactly when it cuts a structure.
    @Test func truncationSweep() {
        let full = bytes(Self.rich)
        var boundaries = Set<Int>()
        var i = 0
        while i < full.count { boundaries.insert(i); i += Int(full[i]) + 1 }
        for n in 0..<full.count {
            let ad = AdvertisingData.decode(Array(full[0..<n]))
            #expect(ad.issues.isEmpty == boundaries.contains(n), "prefix of \(n) bytes")
        }
    }

    /// Random bytes never trap; decoded lengths stay inside the input.
    @Test func randomInputNeverTraps() {
        var rng = SeededRandom(seed: 42)
        for _ in 0..<5000 {
            let n = Int(rng.next() % 64)
            let input = (0..<n).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
            let ad = AdvertisingData.decode(input)
            let scan = BeaconDecoder(iBeaconCompanies: [0x0059]).decode(ad)
            #expect(ad.manufacturerData.allSatisfy { $0.data.count <= n })
            _ = scan
        }
    }

    @Test(arguments: [
        ("feaa", "0000feaa-0000-1000-8000-00805f9b34fb"),
        ("0xFEAA", "0000feaa-0000-1000-8000-00805f9b34fb"),
        ("12345678", "12345678-0000-1000-8000-00805f9b34fb"),
        ("E2C56DB5-DFFB-48D2-B060-D0F5A71096E0", "e2c56db5-dffb-48d2-b060-d0f5a71096e0"),
    ])
    func bluetoothUUIDParsing(text: String, canonical: String) throws {
        #expect(try #require(BluetoothUUID(text)).description == canonical)
    }

    @Test func bluetoothUUIDRejectsJunk() {
        #expect(BluetoothUUID("feaax") == nil)
        #expect(BluetoothUUID("123") == nil)
        #expect(BluetoothUUID("e2c56db5dffb48d2b060d0f5a71096e0") == nil)
    }

    @Test func addressForms() throws {
        let a = try #require(BLEAddress("F1:55:90:65:29:DC"))
        #expect(a.description == "f1:55:90:65:29:dc")
        #expect(BLEAddress(littleEndian: bytes("dc29659055f1")) == a)
        #expect(a.randomKind == .staticAddress)
        #expect(try #require(BLEAddress("708194000000")).randomKind == .resolvablePrivate)
        #expect(try #require(BLEAddress("3f0b33aee608")).randomKind == .nonResolvablePrivate)
        #expect(BLEAddress("f1:55:90") == nil)
    }
}

