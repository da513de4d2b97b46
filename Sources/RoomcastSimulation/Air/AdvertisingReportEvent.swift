/// Encodes the HCI event a controller sends for one received legacy advertisement:
/// LE Meta event (0x3E), subevent LE Advertising Report (0x02), one report
/// (Core 5.4 Vol 4 Part E §7.7.65.2).
public enum AdvertisingReportEvent {
    /// Most AD bytes a legacy advertising PDU carries.
    public static let maxDataLength = 31

    /// The event's bytes after the H4 indicator: event code, parameter length, subevent,
    /// Num_Reports = 1, Event_Type, Address_Type, Address (little-endian on the wire, so
    /// `address` in display order is reversed), Data_Length, Data, RSSI (signed dBm).
    /// Data beyond 31 bytes is cut, as a legacy PDU cannot hold it; RSSI is clamped to
    /// -127...20 dBm (127 would mean "not available").
    public static func encode(eventType: UInt8, addressType: UInt8, address: [UInt8], data: [UInt8], rssi: Int) -> [UInt8] {
        let ad = data.prefix(maxDataLength)
        let addr = Array(address.prefix(6)) + [UInt8](repeating: 0, count: max(0, 6 - address.count))
        var out: [UInt8] = [0x3E, UInt8(12 + ad.count), 0x02, 0x01, eventType, addressType]
        out += addr.reversed()
        out.append(UInt8(ad.count))
        out += ad
        out.append(UInt8(bitPattern: Int8(max(-127, min(20, rssi)))))
        return out
    }
}
