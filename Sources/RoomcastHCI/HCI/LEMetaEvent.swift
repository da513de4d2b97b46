import Shared

/// The LE Meta event's subevents (Core 5.4 Vol 4 Part E §7.7.65).
public enum LEMetaEvent: Sendable, Hashable {
    /// Core 5.4 Vol 4 Part E §7.7.65.2: one or more legacy advertising reports.
    case advertisingReports([AdvertisingReport])
    /// Core 5.4 Vol 4 Part E §7.7.65.13: extended reports, possibly fragments
    /// (see `AdvertisingEventType.dataStatus` and `ExtendedReportAssembler`).
    case extendedAdvertisingReports([AdvertisingReport])
    case unknown(subevent: UInt8, parameters: [UInt8])

    public static let advertisingReportSubevent: UInt8 = 0x02
    public static let extendedAdvertisingReportSubevent: UInt8 = 0x0D

    static func decode(from r: inout ByteReader, timestamp: Double) throws(HCIDecodeError) -> LEMetaEvent {
        let sub = try r.hci { r throws(ByteReaderError) in try r.readUInt8() }
        switch sub {
        case advertisingReportSubevent:
            return .advertisingReports(try decodeLegacyReports(from: &r, timestamp: timestamp))
        case extendedAdvertisingReportSubevent:
            return .extendedAdvertisingReports(try decodeExtendedReports(from: &r, timestamp: timestamp))
        default:
            return .unknown(subevent: sub, parameters: r.readRest())
        }
    }

    /// Reports are laid out one after another (Event_Type, Address_Type, Address,
    /// Data_Length, Data, RSSI), as controllers, BlueZ's kernel and btmon read them.
    static func decodeLegacyReports(from r: inout ByteReader, timestamp: Double) throws(HCIDecodeError) -> [AdvertisingReport] {
        var reports = [AdvertisingReport]()
        try decodeLegacyReports(from: &r, timestamp: timestamp, into: &reports)
        return reports
    }

    /// When `event` (from its event code on) is an LE Advertising Report event whose length byte
    /// agrees with its size, appends its reports to `reports` as `HCIEvent.decode` would decode
    /// them and returns true, or throws what `HCIEvent.decode` would throw and leaves `reports` as
    /// it was; returns false for any other event, which the caller decodes with `HCIEvent.decode`.
    /// The reader threads (live and replay) take report events this way, without an event value
    /// and an array per event.
    package static func appendReports(ofEvent event: ByteReader, timestamp: Double,
                              into reports: inout [AdvertisingReport]) throws(HCIDecodeError) -> Bool {
        var r = event
        let o = r.offset
        guard r.remaining >= 3, r.bytes[o] == HCIEvent.leMetaCode, r.bytes[o + 2] == advertisingReportSubevent,
              Int(r.bytes[o + 1]) == r.remaining - 2 else { return false }
        try r.hci { r throws(ByteReaderError) in try r.skip(3) }
        try decodeLegacyReports(from: &r, timestamp: timestamp, into: &reports)
        return true
    }

    /// Appends the reports to `reports`, or throws and leaves it as it was: the reader thread
    /// decodes a burst's report events straight into the burst, without an array per event.
    static func decodeLegacyReports(from r: inout ByteReader, timestamp: Double,
                                    into reports: inout [AdvertisingReport]) throws(HCIDecodeError) {
        let before = reports.count
        do throws(HCIDecodeError) {
            try appendLegacyReports(from: &r, timestamp: timestamp, into: &reports)
        } catch {
            if reports.count > before { reports.removeSubrange(before...) }
            throw error
        }
    }

    private static func appendLegacyReports(from r: inout ByteReader, timestamp: Double,
                                            into reports: inout [AdvertisingReport]) throws(HCIDecodeError) {
        try r.hci { r throws(ByteReaderError) in
            let n = Int(try r.readUInt8())
            if reports.isEmpty { reports.reserveCapacity(n) }
            for _ in 0..<n {
                let type = try r.readUInt8()
                let addressType = try r.readUInt8()
                let address = try r.readAddressValue()
                let length = Int(try r.readUInt8())
                let data = try r.readBytes(length)
                let rssi = try r.readInt8()
                reports.append(AdvertisingReport(
                    addressValue: address, addressType: AddressType(rawValue: addressType),
                    eventType: AdvertisingEventType(legacy: type), rssi: measuredRSSI(rssi),
                    data: data, timestamp: timestamp))
            }
        }
    }

    /// A report's RSSI: −127…+20 dBm; 127 means not available, and 21…126 are reserved, so no
    /// measurement either (published, +100 dBm would be a reading the aggregator refuses).
    static func measuredRSSI(_ raw: Int8) -> Int? {
        raw <= 20 ? Int(raw) : nil
    }

    static func decodeExtendedReports(from r: inout ByteReader, timestamp: Double) throws(HCIDecodeError) -> [AdvertisingReport] {
        try r.hci { r throws(ByteReaderError) in
            let n = Int(try r.readUInt8())
            var reports = [AdvertisingReport]()
            reports.reserveCapacity(n)
            for _ in 0..<n {
                let type = try r.readUInt16LE()
                let addressType = try r.readUInt8()
                let address = try r.readAddressValue()
                let primary = try r.readUInt8()
                let secondary = try r.readUInt8()
                let sid = try r.readUInt8()
                let tx = try r.readInt8()
                let rssi = try r.readInt8()
                let periodic = try r.readUInt16LE()
                let directType = try r.readUInt8()
                let direct = try r.readAddressValue()
                let length = Int(try r.readUInt8())
                let data = try r.readBytes(length)
                let eventType = AdvertisingEventType(extended: type)
                let ext = AdvertisingReport.ExtendedFields(
                    primaryPHY: PHY(rawValue: primary),
                    secondaryPHY: secondary == 0 ? nil : PHY(rawValue: secondary),
                    sid: sid == 0xFF ? nil : sid,
                    txPower: tx == 127 ? nil : Int(tx),
                    periodicAdvertisingInterval: periodic,
                    directAddress: eventType.isDirected ? (AdvertisingReport.bytes(of: direct)) : nil,
                    directAddressType: eventType.isDirected ? AddressType(rawValue: directType) : nil)
                reports.append(AdvertisingReport(
                    addressValue: address, addressType: AddressType(rawValue: addressType), eventType: eventType,
                    rssi: measuredRSSI(rssi), data: data, timestamp: timestamp, extended: ext))
            }
            return reports
        }
    }
}

extension ByteReader {
    /// Six little-endian address bytes as a 48-bit number (display order's first byte most
    /// significant), without an array.
    @inline(__always)
    mutating func readAddressValue() throws(ByteReaderError) -> UInt64 {
        try skip(6)
        let b = bytes, o = offset - 6
        var v: UInt64 = 0
        for i in (0..<6).reversed() { v = v << 8 | UInt64(b[o + i]) }
        return v
    }
}
