import RoomcastAdvertising

/// Test-only: the address, type, RSSI and AD bytes of the first report in an HCI LE advertising
/// report event, read at the fixed offsets of Core 5.4 Vol 4 Part E §7.7.65.2 (legacy) and
/// §7.7.65.13 (extended). RoomcastHCI owns real event decoding; this only feeds peer vectors
/// that carry full events to the AD decoder under test.
struct ExtractedReport: Equatable {
    var address: BLEAddress
    var addressType: BLEAddressType
    var rssi: Int
    var ad: [UInt8]
}

enum ReportExtractor {
    /// Accepts the event with the H4 byte (`04 3e …`), without it (`3e …`), or the parameters
    /// only (starting at Num_Reports, legacy reports). Nil when too short.
    ///
    /// `toEnd`: beacontools' hand-made vectors carry a wrong length byte; like beacontools,
    /// take the AD as everything up to the last byte and the last byte as RSSI.
    static func extract(_ bytes: [UInt8], toEnd: Bool = false) -> ExtractedReport? {
        var b = bytes[...]
        if b.count >= 2, b[b.startIndex + 1] == 0x3E { b = b.dropFirst(3) }      // H4 + code + length
        else if b.first == 0x3E { b = b.dropFirst(2) }                           // code + length
        else { return legacy(b, toEnd: toEnd) }                                   // parameters only
        guard let sub = b.first else { return nil }
        switch sub {
        case 0x02: return legacy(b.dropFirst(), toEnd: toEnd)
        case 0x0D: return extended(b.dropFirst())
        default: return nil
        }
    }

    private static func legacy(_ p: ArraySlice<UInt8>, toEnd: Bool) -> ExtractedReport? {
        let a = Array(p)
        guard a.count >= 10, a[0] >= 1, let address = BLEAddress(littleEndian: a[3..<9]) else { return nil }
        let length = Int(a[9])
        if toEnd {
            guard a.count >= 11 else { return nil }
            return ExtractedReport(address: address, addressType: BLEAddressType(hci: a[2]),
                                   rssi: Int(Int8(bitPattern: a[a.count - 1])), ad: Array(a[10..<(a.count - 1)]))
        }
        guard a.count >= 10 + length + 1 else { return nil }
        return ExtractedReport(address: address, addressType: BLEAddressType(hci: a[2]),
                               rssi: Int(Int8(bitPattern: a[10 + length])), ad: Array(a[10..<(10 + length)]))
    }

    private static func extended(_ p: ArraySlice<UInt8>) -> ExtractedReport? {
        let a = Array(p)
        // Num_Reports, Event_Type(2), Address_Type, Address(6), PHYs(2), SID, TX power, RSSI,
        // interval(2), direct address type + address(7), Data_Length, Data.
        guard a.count >= 25, a[0] >= 1, let address = BLEAddress(littleEndian: a[4..<10]) else { return nil }
        let length = Int(a[24])
        guard a.count >= 25 + length else { return nil }
        return ExtractedReport(address: address, addressType: BLEAddressType(hci: a[3]),
                               rssi: Int(Int8(bitPattern: a[14])), ad: Array(a[25..<(25 + length)]))
    }
}
