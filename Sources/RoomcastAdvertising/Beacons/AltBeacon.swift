/// An AltBeacon frame (github.com/AltBeacon/spec): manufacturer data of any company,
/// beacon code 0xBEAC, 20 identifier bytes, reference RSSI at 1 m, one reserved byte.
public struct AltBeacon: Sendable, Equatable {
    public var companyID: UInt16
    /// ID1: 16 bytes (by convention a UUID).
    public var id1: [UInt8]
    /// ID2 (big-endian).
    public var id2: UInt16
    /// ID3 (big-endian).
    public var id3: UInt16
    /// Reference RSSI in dBm at 1 m.
    public var referenceRSSI: Int8
    /// Manufacturer-reserved byte; nil when the frame leaves it out (seen on real hardware).
    public var reserved: UInt8?

    /// Decodes the bytes after the company id; nil unless they start `BE AC` and hold the
    /// identifiers and the reference RSSI.
    public static func decode(companyID: UInt16, _ d: ArraySlice<UInt8>) -> AltBeacon? {
        let s = d.startIndex
        guard d.count >= 23, d[s] == 0xBE, d[s + 1] == 0xAC else { return nil }
        return AltBeacon(companyID: companyID, id1: Array(d[(s + 2)..<(s + 18)]),
                         id2: UInt16(d[s + 18]) << 8 | UInt16(d[s + 19]),
                         id3: UInt16(d[s + 20]) << 8 | UInt16(d[s + 21]),
                         referenceRSSI: Int8(bitPattern: d[s + 22]),
                         reserved: d.count > 23 ? d[s + 23] : nil)
    }
}
